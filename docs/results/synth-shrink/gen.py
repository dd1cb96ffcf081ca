import numpy as np, pandas as pd, json
rng = np.random.default_rng(20261211)
import sys
D = (sys.argv[1] if len(sys.argv) > 1 else ".") + "/"
# ---------- insurance claims ----------
n = 8000
age = np.clip(np.round(rng.gamma(9, 5.2, n) + 12), 21, 85).astype(int)
regions = [f"R{i:02d}" for i in range(12)]
rp = np.array([30, 18, 12, 9, 8, 6, 5, 4, 3, 2.5, 1.5, 1.0]); rp /= rp.sum()
region = rng.choice(regions, n, p=rp)
ptype = rng.choice(["basic", "standard", "premium", "fleet"], n, p=[.45, .35, .15, .05])
lam = 0.25 + 0.6 * (ptype == "fleet") + 0.15 * (age < 30)
nclaims = np.minimum(rng.negative_binomial(1, 1 / (1 + lam * 1.5), n), 12)
haspos = (rng.random(n) < 0.4) | (nclaims > 2)
haspos &= rng.random(n) < 0.9
amount = np.where(haspos, np.round(np.exp(rng.normal(7.8 + 0.5 * (ptype == "premium") + 0.15 * np.minimum(nclaims, 4), 1.3, n))), 0)
amount = np.clip(amount, 0, 500000).astype(int)
logit = -4 + 0.45 * np.log1p(amount) * (amount > 0) / 3 + 0.5 * nclaims + 0.8 * (region == "R09") - 0.02 * (age - 40)
logit = -4.2 + 0.35 * np.log1p(amount) + 0.45 * nclaims - 0.02 * (age - 40) + 1.0 * (region == "R09")
fraud = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
ins = pd.DataFrame(dict(amount=amount, nclaims=nclaims, age=age, region=region, policy=ptype, fraud=fraud))
ins.to_csv(D + "ins.csv", index=False)
json.dump({"target": {"name": "fraud", "labels": ["no", "yes"]}, "columns": [
    {"name": "amount", "type": "numeric", "lower": 0, "upper": 500000, "step": 1},
    {"name": "nclaims", "type": "numeric", "lower": 0, "upper": 12, "step": 1},
    {"name": "age", "type": "numeric", "lower": 18, "upper": 99, "step": 1},
    {"name": "region", "type": "categorical", "levels": regions},
    {"name": "policy", "type": "categorical", "levels": ["basic", "standard", "premium", "fleet"]}]},
    open(D + "ins.schema.json", "w"), indent=1)
# ---------- hospital stays ----------
n = 3000
diag = [f"D{i:02d}" for i in range(45)]
zp = 1 / np.arange(1, 46) ** 1.1; zp /= zp.sum()
dg = rng.choice(45, n, p=zp)
sex = rng.choice(["F", "M"], n)
bands = ["0-17", "18-39", "40-64", "65-79", "80+"]
ab = rng.choice(5, n, p=[.08, .25, .35, .22, .10])
u = rng.random(n)
short = rng.choice([0, 1, 2, 3], n, p=[.35, .3, .2, .15])
tail = np.round(4 + rng.pareto(1.3, n) * 6 * (1 + 0.3 * ab / 4)).astype(int)
los = np.where(u < 0.8, short, tail)
heap = rng.random(n)
los = np.where((los >= 4) & (heap < 0.25), 7, los)
los = np.where((los >= 10) & (heap > 0.85), 14, los)
los = np.clip(los, 0, 365)
dgrisk = np.linspace(1.2, -0.8, 45)[dg]
logit = -2.2 + 0.6 * np.log1p(los) + dgrisk + 0.2 * ab
readm = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
hos = pd.DataFrame(dict(los=los, diagnosis=np.array(diag)[dg], sex=sex, ageband=np.array(bands)[ab], readmitted=readm))
hos.to_csv(D + "hos.csv", index=False)
json.dump({"target": {"name": "readmitted", "labels": ["no", "yes"]}, "columns": [
    {"name": "los", "type": "numeric", "lower": 0, "upper": 365, "step": 1},
    {"name": "diagnosis", "type": "categorical", "levels": diag},
    {"name": "sex", "type": "categorical", "levels": ["F", "M"]},
    {"name": "ageband", "type": "categorical", "levels": bands}]},
    open(D + "hos.schema.json", "w"), indent=1)
# ---------- survey ----------
n = 1500
fA = rng.normal(0, 1, n); fB = 0.3 * fA + rng.normal(0, 0.95, n)
def lik(f, load):
    z = load * f + rng.normal(0, np.sqrt(1 - load ** 2), n)
    return np.digitize(z, [-1.3, -0.4, 0.4, 1.3]) + 1
items = {}
for j in range(8): items[f"a{j+1}"] = lik(fA, 0.85)
for j in range(7): items[f"b{j+1}"] = lik(fB, 0.85)
inc = np.exp(rng.normal(10.8 + 0.25 * fA, 0.7, n))
r = rng.random(n)
inc = np.where(r < 0.6, np.round(inc / 1000) * 1000, np.where(r < 0.8, np.round(inc / 100) * 100, np.round(inc)))
inc = np.clip(inc, 0, 1_000_000).astype(int)
logit = -0.3 + 1.2 * fA - 0.8 * fB + 0.3 * (np.log(inc + 1) - 10.8)
tgt = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "pos", "neg")
sv = pd.DataFrame(items); sv["income"] = inc; sv["target"] = tgt
sv.to_csv(D + "sur.csv", index=False)
json.dump({"target": {"name": "target", "labels": ["neg", "pos"]}, "columns":
    [{"name": k, "type": "numeric", "lower": 1, "upper": 5, "step": 1} for k in items] +
    [{"name": "income", "type": "numeric", "lower": 0, "upper": 1000000, "step": 1}]},
    open(D + "sur.schema.json", "w"), indent=1)
for name, df in [("ins", ins), ("hos", hos), ("sur", sv)]:
    print(name, df.shape); print(df.describe(include="all").T.to_string()[:3000])
print("ins zero share", (ins.amount == 0).mean(), "fraud", (ins.fraud == "yes").mean(), ins.region.value_counts().to_dict())
print("hos los<=3", (hos.los <= 3).mean(), "7:", (hos.los == 7).mean(), "14:", (hos.los == 14).mean(), "readm", (hos.readmitted == "yes").mean())
print(hos.diagnosis.value_counts().tail(10).to_dict())
print("sur inc%1000", (sv.income % 1000 == 0).mean(), "target", (sv.target == "pos").mean())
print(sv[[f"a{j}" for j in range(1, 4)] + ["b1", "b2"]].corr().round(2))
