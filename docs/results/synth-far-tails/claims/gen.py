import numpy as np, pandas as pd
rng = np.random.default_rng(8)

# (a) insurance claims: claim amount declared 0-1,000,000; bulk <~5000; 3% far cluster 180k-240k
n = 4000
policy = rng.choice(["basic", "plus", "premium"], n, p=[.5, .35, .15])
vehicle_age = np.clip(rng.poisson(6, n), 0, 30)
claim = np.round(np.exp(rng.normal(6.3, 0.8, n))).clip(0, 5200)
far = rng.random(n) < 0.03
claim[far] = rng.integers(180_000, 240_001, far.sum())
channel = rng.choice(["agent", "web", "phone"], n, p=[.4, .45, .15])
p = 0.03 + 0.6*far + 0.05*(policy == "basic") + 0.1*(channel == "web")*(vehicle_age > 8)
fraud = np.where(rng.random(n) < p, "yes", "no")
pd.DataFrame(dict(policy=policy, vehicle_age=vehicle_age, claim_amount=claim.astype(int),
                  channel=channel, fraud=fraud)).to_csv("a_claims.csv", index=False)

# (b) panel: app users, weekly rows, 1-6 rows per person, purchases mostly zero
persons = 900
rows = []
for pid in range(persons):
    k = rng.integers(1, 7)
    plan = rng.choice(["free", "trial", "paid"], p=[.6, .25, .15])
    act = rng.gamma(1.0, 1.0)
    churn = "yes" if rng.random() < (0.5 if plan == "free" else 0.2) * (1.5 if act < .5 else 1) else "no"
    for w in range(k):
        minutes = int(np.clip(rng.poisson(30*act + (40 if plan == "paid" else 0)), 0, 1440))
        lam = 0.05 + (1.5 if plan == "paid" else 0.2) * act
        purchases = int(rng.poisson(lam)) if rng.random() < 0.35 else 0
        rows.append(dict(user_id=pid, week=w+1, plan=plan, minutes=minutes,
                         purchases=min(purchases, 50), churned=churn))
pd.DataFrame(rows).to_csv("b_panel.csv", index=False)

# (c) small house sales: year_built 1990-2024, zip-like code, price heaped at round values
n = 450
year = rng.integers(1990, 2025, n)
zipc = rng.choice([94101, 94103, 94107, 94110, 94112, 94115, 94117, 94121], n)
price = rng.lognormal(np.log(420) + 0.01*(year-1990), 0.3, n)   # in thousands
heap = rng.random(n) < 0.55
price = np.where(heap, np.round(price/50)*50, np.round(price))
price = np.clip(price, 100, 2000).astype(int)
beds = np.clip(rng.poisson(2 + (price > 500)), 1, 6)
above = np.where(rng.random(n) < 0.2 + 0.4*(year > 2015), "yes", "no")
pd.DataFrame(dict(year_built=year, zip=zipc, price_k=price, bedrooms=beds,
                  above_asking=above)).to_csv("c_houses.csv", index=False)

# (d) credit scores 0-1000 with data 900-1000 + 12% missing
n = 2500
score = np.clip(np.round(rng.normal(955, 18, n)), 900, 1000)
income = np.round(rng.lognormal(np.log(60), 0.4, n)).clip(10, 400).astype(int)
tenure = rng.integers(0, 31, n)
default = np.where(rng.random(n) < 0.02 + 0.3*(score < 935) + 0.1*(income < 40), "yes", "no")
s = pd.Series(score).astype("Int64")
miss = rng.random(n) < 0.12
s[miss] = pd.NA
pd.DataFrame(dict(score=s, income_k=income, tenure_years=tenure, default=default)).to_csv("d_credit.csv", index=False)
