"""Held-out tables of sweep 12 (a helper playing a new user; seeded): python gen.py DIR writes the CSVs to DIR."""
import numpy as np, pandas as pd, os, sys
OUT = sys.argv[1]; os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(12)

# 1. retail transactions: no binary label. 4-class payment, amounts heaped, quantity, store id
n = 4000
store = rng.integers(1, 13, n)                      # 12 stores, integer ids
qty = np.minimum(1 + rng.geometric(0.35, n) - 1, 30)
unit = np.round(rng.lognormal(2.3, 0.7, n), 2)
amount = np.round(qty * unit, 2)
heap = rng.random(n) < 0.15                          # gift cards etc. at round values
amount[heap] = rng.choice([10, 20, 25, 50, 100], heap.sum())
amount = np.minimum(amount, 2000)
p_card = 0.35 + 0.3 * (amount > 50)
u = rng.random(n)
pay = np.where(u < p_card, "card", np.where(u < p_card + 0.25, "mobile",
       np.where(u < p_card + 0.25 + 0.25 * (amount < 30), "cash", "voucher")))
pay[heap & (rng.random(n) < 0.7)] = "voucher"
wd = rng.choice(["Mon","Tue","Wed","Thu","Fri","Sat","Sun"], n, p=[.12,.12,.12,.13,.16,.2,.15])
pd.DataFrame({"store_id": store, "weekday": wd, "quantity": qty, "amount": amount,
              "payment": pay}).to_csv(f"{OUT}/retail.csv", index=False)

# 2. 3-class outcome
n = 2000
age = np.clip(np.round(rng.normal(55, 14, n)), 18, 95).astype(int)
sex = rng.choice(["F", "M"], n)
treat = rng.choice(["placebo", "low", "high"], n)
dose = np.where(treat == "placebo", 0, np.where(treat == "low", 50, 100)) + rng.integers(-5, 6, n) * (treat != "placebo")
eff = (treat == "high") * 1.2 + (treat == "low") * 0.6 - (age - 55) / 30 + rng.normal(0, 1, n)
outc = np.where(eff > 1.0, "improved", np.where(eff > -0.3, "same", "worse"))
pd.DataFrame({"age": age, "sex": sex, "treatment": treat, "dose": dose,
              "outcome": outc}).to_csv(f"{OUT}/outcome3.csv", index=False)

# 3. panel: several rows per person
people = 900
k = rng.integers(1, 5, people)
pid = np.repeat(np.arange(1001, 1001 + people), k)
visit = np.concatenate([np.arange(1, kk + 1) for kk in k])
base_age = np.repeat(rng.integers(30, 80, people), k)
smoker = np.repeat(rng.choice(["never", "former", "current"], people, p=[.5, .3, .2]), k)
sbp = np.round(base_age * 0.5 + 100 + (smoker == "current") * 8 + rng.normal(0, 10, len(pid))).astype(int)
cost = np.round(rng.lognormal(5, 1.1, len(pid)), 0)
cost[rng.random(len(pid)) < 0.3] = 0
pd.DataFrame({"person_id": pid, "visit": visit, "age": base_age + visit // 3, "smoker": smoker,
              "sbp": sbp, "cost": cost.astype(int)}).to_csv(f"{OUT}/panel.csv", index=False)

# 4. skewed: counts 90% zero, heaped incomes, age heap at top edge (top-coded 90)
n = 3000
age = np.round(rng.gamma(6, 9, n)).astype(int) + 18
age = np.minimum(age, 90)                             # top-coded: heap at 90
region = rng.choice(["north", "south", "east", "west"], n, p=[.4, .3, .2, .1])
days = np.where(rng.random(n) < 0.9, 0, np.minimum(rng.geometric(0.08, n), 300))
days = np.where((age > 70) & (rng.random(n) < 0.15), rng.geometric(0.1, n), days)
inc = np.round(rng.lognormal(10.6, 0.6, n), -2)
r5k = rng.random(n) < 0.5
inc[r5k] = np.round(inc[r5k], -4)                     # heaps at 10,000 multiples
inc = np.minimum(inc, 500000).astype(int)
visits = rng.poisson(0.3 + days / 5)
pd.DataFrame({"age": age, "region": region, "hosp_days": days, "doc_visits": visits,
              "income": inc}).to_csv(f"{OUT}/skewed.csv", index=False)

# 5. tiny table: 12 rows
pd.DataFrame({"grade": rng.choice(["A", "B", "C"], 12), "score": rng.integers(40, 101, 12),
              "passed": rng.choice(["yes", "no"], 12)}).to_csv(f"{OUT}/tiny.csv", index=False)
# 5b. 5 rows
pd.DataFrame({"x": [1, 2, 3, 2, 1], "c": ["a", "b", "a", "a", "b"]}).to_csv(f"{OUT}/tiny5.csv", index=False)

# 6. one-column table
pd.DataFrame({"wait_minutes": np.minimum(rng.geometric(0.05, 800), 240)}).to_csv(f"{OUT}/onecol.csv", index=False)
pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], 600, p=[.6, .3, .1])}).to_csv(f"{OUT}/onecat.csv", index=False)

# 7. all categorical, with dependencies
n = 2500
country = rng.choice(["DE", "FR", "IT", "ES", "NL"], n, p=[.3, .25, .2, .15, .1])
lang = np.where(rng.random(n) < 0.9, pd.Series(country).map({"DE": "de", "FR": "fr", "IT": "it", "ES": "es", "NL": "nl"}), "en")
device = rng.choice(["ios", "android", "web"], n)
plan = np.where(device == "web", rng.choice(["free", "basic", "pro"], n, p=[.6, .3, .1]),
                rng.choice(["free", "basic", "pro"], n, p=[.3, .4, .3]))
churn = np.where(plan == "free", rng.choice(["active", "churned", "paused"], n, p=[.5, .4, .1]),
                 rng.choice(["active", "churned", "paused"], n, p=[.8, .1, .1]))
pd.DataFrame({"country": country, "lang": lang, "device": device, "plan": plan,
              "status": churn}).to_csv(f"{OUT}/allcat.csv", index=False)

# 8. all numeric, correlated
n = 2000
h = np.round(rng.normal(170, 10, n), 1)
w = np.round(h - 100 + rng.normal(0, 9, n), 1)
bmi = np.round(w / (h / 100) ** 2, 1)
steps = np.round(np.maximum(0, rng.normal(8000, 3000, n) - (bmi - 25) * 300), -1).astype(int)
pd.DataFrame({"height_cm": h, "weight_kg": w, "bmi": bmi, "steps": steps}).to_csv(f"{OUT}/allnum.csv", index=False)

# 9. wide Likert: 40 items 1-5 on 2 latent factors
n = 1200
f = rng.normal(0, 1, (n, 2))
cols = {}
for j in range(40):
    z = f[:, j % 2] * 0.9 + rng.normal(0, 1, n)
    cols[f"q{j+1:02d}"] = np.digitize(z, [-1.3, -0.4, 0.4, 1.3]) + 1
cols["group"] = rng.choice(["a", "b", "c"], n)
pd.DataFrame(cols).to_csv(f"{OUT}/likert.csv", index=False)

# 10. 200+ levels column (product codes) beside a category
n = 3000
codes = [f"P{i:04d}" for i in range(260)]
p = 1 / np.arange(1, 261) ** 1.1; p /= p.sum()
prod = rng.choice(codes, n, p=p)
cat = np.array([["food", "toys", "tools", "garden"][int(c[1:]) % 4] for c in prod])
qty = rng.integers(1, 6, n)
pd.DataFrame({"product": prod, "category": cat, "qty": qty}).to_csv(f"{OUT}/manylevels.csv", index=False)

# 11. messy: missing cells, dates as text, booleans, thousands separators, units
n = 1500
dates = pd.to_datetime("2023-01-01") + pd.to_timedelta(rng.integers(0, 365, n), "D")
salary = rng.integers(20, 150, n) * 1000
member = rng.random(n) < 0.4
wt = np.round(rng.normal(75, 12, n)).astype(int)
dept = rng.choice(["sales", "ops", "it", "hr"], n)
score = np.round(rng.normal(60, 15, n), 1)
df = pd.DataFrame({"signup_date": dates.strftime("%Y-%m-%d"),
                   "salary": [f"{s:,}" for s in salary],
                   "member": np.where(member, "true", "false"),
                   "weight": [f"{x} kg" for x in wt],
                   "dept": dept, "score": score})
df.loc[rng.random(n) < 0.08, "score"] = np.nan
df.loc[rng.random(n) < 0.05, "dept"] = np.nan
df.to_csv(f"{OUT}/messy.csv", index=False)
# 11b. the same table as a user would clean it (dates -> days since 2023-01-01, numbers plain)
clean = pd.DataFrame({"signup_day": (dates - pd.Timestamp("2023-01-01")).days, "salary": salary,
                      "member": np.where(member, "true", "false"), "weight_kg": wt,
                      "dept": df["dept"], "score": df["score"]})
clean.to_csv(f"{OUT}/messy_clean.csv", index=False)
print("ok")
