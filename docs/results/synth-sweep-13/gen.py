"""Sweep 13 tables. python gen.py  (seed 13)"""
import numpy as np, pandas as pd, csv
rng = np.random.default_rng(13)

# T1: years / dates as numbers, pct with many decimals, constant col, rare level, rare target
n = 5000
year = rng.integers(1990, 2024, n)
month = rng.integers(1, 13, n); day = rng.integers(1, 29, n)
signup = year * 10000 + month * 100 + day          # yyyymmdd as an integer
pct = np.round(rng.beta(2, 5, n) * 100, 4)          # 4 decimals
region = rng.choice(["north", "south", "east", "west"], n, p=[.4, .3, .2, .1]).astype(object)
region[rng.choice(n, 3, replace=False)] = "island"  # 3 rows in 5000
const = np.full(n, 7)
p = 1 / (1 + np.exp(-(-5.2 + 0.04 * pct)))
churn = np.where(rng.random(n) < p, "yes", "no")
pd.DataFrame({"year": year, "signup_date": signup, "pct_score": pct, "const_col": const,
              "region": region, "churn": churn}).to_csv("t1_dates.csv", index=False)

# T2: 2 rows only
pd.DataFrame({"a": [1, 5], "b": ["x", "y"], "c": [0.5, 2.5]}).to_csv("t2_tiny.csv", index=False)

# T3: 150 rows, 20 columns
n = 150
d = {}
for j in range(8):
    d[f"num{j}"] = rng.integers(0, 100, n)
for j in range(6):
    d[f"cat{j}"] = rng.choice(list("abcd"[: 2 + j % 3]), n)
for j in range(5):
    d[f"flt{j}"] = np.round(rng.normal(50, 10, n), 1)
d["label"] = np.where(d["num0"] + rng.normal(0, 20, n) > 50, "pos", "neg")
pd.DataFrame(d).to_csv("t3_wide150.csv", index=False)

# T4: negatives, zero-crossing, 3-distinct numeric, bounds declared far wider later
n = 4000
temp = np.round(rng.normal(8, 12, n), 1)            # -30..45 ish
balance = np.round(rng.normal(0, 1500, n)).astype(int)
trend = rng.choice([-1, 0, 1], n, p=[.25, .5, .25])
change = np.round(trend * rng.gamma(2, 3, n), 2)     # zero heap, sign matches trend
pd.DataFrame({"temp_c": temp, "balance": balance, "trend": trend,
              "change": change}).to_csv("t4_negatives.csv", index=False)

# T5: deterministic relations
n = 5000
a = rng.integers(0, 51, n)
b = 2 * a
city = rng.choice(["Paris", "Lyon", "Berlin", "Munich", "Rome"], n, p=[.3, .2, .2, .15, .15])
country = pd.Series(city).map({"Paris": "FR", "Lyon": "FR", "Berlin": "DE", "Munich": "DE", "Rome": "IT"})
big = np.where(a > 25, "yes", "no")
pd.DataFrame({"a": a, "b": b, "city": city, "country": country, "a_gt_25": big}).to_csv("t5_determ.csv", index=False)

# T6: semicolon, BOM, quoted numbers, unicode/space names, NA and ? missing
n = 3000
age = rng.integers(18, 90, n).astype(object)
inc = np.round(rng.lognormal(10, 0.5, n), 2).astype(object)
reg = rng.choice(["Île-de-France", "Bretagne", "Provence"], n).astype(object)
sat = rng.integers(1, 6, n).astype(object)
age[rng.random(n) < .05] = "NA"
inc[rng.random(n) < .08] = "?"
df6 = pd.DataFrame({"Âge (ans)": age, "revenu annuel": inc, "région": reg, "satisfaction": sat})
with open("t6_semicolon.csv", "w", encoding="utf-8-sig", newline="") as f:
    df6.to_csv(f, sep=";", index=False, quoting=csv.QUOTE_ALL)
df6.to_csv("t6_tab.tsv", sep="\t", index=False)

# T7: 200,000 rows
n = 200_000
g = rng.choice(["A", "B", "C"], n, p=[.5, .3, .2])
x1 = rng.integers(0, 100, n)
x2 = np.round(rng.gamma(2, 20, n) + (g == "B") * 30, 1)
x3 = rng.poisson(2, n)
s = rng.choice(["s1", "s2", "s3", "s4", "s5", "s6"], n)
yy = np.where(rng.random(n) < 1 / (1 + np.exp(-(x1 - 50) / 15)), "1", "0")
pd.DataFrame({"group": g, "x1": x1, "x2": x2, "x3": x3, "store": s, "y": yy}).to_csv("t7_big.csv", index=False)

# T8: rare target (2%) strongly tied to a feature, constant categorical column
n = 10000
risk = rng.choice(["low", "mid", "high"], n, p=[.7, .25, .05])
score = rng.integers(300, 851, n)
prob = np.select([risk == "high", risk == "mid"], [0.25, 0.02], 0.0025)
fraud = np.where(rng.random(n) < prob, "fraud", "ok")
pd.DataFrame({"risk": risk, "score": score, "channel": "web", "fraud": fraud}).to_csv("t8_raretarget.csv", index=False)
print("ok")

# T9 (separate seed so T1-T8 are unchanged): 3-distinct numeric in a wide declared range,
# "NA" as a real level (Namibia), a percentage with 6 decimals near 0 and 100
rng9 = np.random.default_rng(1309)
n = 3000
dose = rng9.choice([0, 50, 100], n, p=[.6, .3, .1])          # 3 distinct values, declared 0..1000
ctry = rng9.choice(["NA", "US", "FR"], n, p=[.2, .5, .3])   # NA = Namibia
share = np.round(np.clip(rng9.beta(0.3, 0.3, n), 0, 1) * 100, 6)  # U-shaped, heaps near 0 and 100
share[rng9.random(n) < .1] = 100.0                             # 10% exactly 100 %
resp = np.where(rng9.random(n) < 0.1 + dose / 200, "yes", "no")
pd.DataFrame({"dose_mg": dose, "country": ctry, "share_pct": share, "resp": resp}).to_csv("t9_heaps.csv", index=False)
print("ok9")
