import numpy as np, pandas as pd
rng = np.random.default_rng(2026)
# (a) retail
n = 2000
heap = rng.random(n) < 0.20
bv = np.round(np.exp(rng.normal(3.3, 0.9, n)), 2)
bv[heap] = rng.choice([10, 20, 50], heap.sum(), p=[0.4, 0.35, 0.25])
bv = np.clip(bv, 0, 2000)
items = rng.poisson(np.where(heap, 0.3, 2.5))
items[rng.random(n) < 0.25] = 0
wd = rng.choice(["Mon","Tue","Wed","Thu","Fri","Sat","Sun"], n, p=[.1,.1,.1,.12,.16,.24,.18])
store = rng.choice([f"S{i:02d}" for i in range(1,16)], n, p=np.r_[np.full(5,.12), np.full(10,.04)])
pay = np.where(bv > 60, rng.choice(["card","mobile","cash"], n, p=[.7,.25,.05]),
               rng.choice(["card","mobile","cash"], n, p=[.4,.2,.4]))
ret = (rng.random(n) < 1/(1+np.exp(-(-3 + 0.01*np.minimum(bv,300) + 0.8*(pay=="mobile"))))).astype(int)
pd.DataFrame(dict(basket_value=bv, items=items, weekday=wd, store=store, payment=pay,
                  returned=np.where(ret==1,"yes","no"))).to_csv("retail.csv", index=False)
# (b) clinical
n = 800
age = rng.integers(25, 90, n)
sex = rng.choice(["F","M"], n)
bmi = np.round(np.clip(rng.normal(27 + 0.03*(age-50), 4.5, n), 15, 55), 1)
sbp = 100 + 0.6*age + 0.8*(bmi-27) + rng.normal(0, 14, n)
heapm = rng.random(n) < 0.6
sbp = np.where(heapm, np.round(sbp/10)*10, np.round(sbp)).astype(int)
sbp = np.clip(sbp, 80, 220)
lin = -14 + 0.09*age + 0.045*sbp
out = (rng.random(n) < 1/(1+np.exp(-lin))).astype(int)
pd.DataFrame(dict(age=age, sex=sex, bmi=bmi, sbp=sbp, event=out)).to_csv("clinical.csv", index=False)
# (c) wage panel
P, Y = 1200, 5
pid = np.repeat(np.arange(P), Y); year = np.tile(np.arange(2018, 2023), P)
occ_p = rng.choice([f"occ{i:02d}" for i in range(20)], P, p=rng.dirichlet(np.ones(20)*2))
occ = np.repeat(occ_p, Y)
ability = np.repeat(rng.normal(0, 0.4, P), Y)
occeff = {f"occ{i:02d}": rng.normal(0, 0.3) for i in range(20)}
hours = np.where(rng.random(P*Y) < 0.55, 40, np.clip(np.round(rng.normal(35, 10, P*Y)), 0, 80)).astype(int)
hours[rng.random(P*Y) < 0.05] = 0
wage = np.round(np.exp(2.8 + ability + np.array([occeff[o] for o in occ]) + 0.03*(year-2018) + rng.normal(0, .25, P*Y)), 2)
wage = np.clip(wage, 0, 500)
sex = np.repeat(rng.choice(["F","M"], P), Y)
ft = np.where(hours >= 35, "yes", "no")
pd.DataFrame(dict(person_id=pid, year=year, occupation=occ, sex=sex, hours=hours, wage=wage, fulltime=ft)).to_csv("panel_with_id.csv", index=False)
pd.DataFrame(dict(year=year, occupation=occ, sex=sex, hours=hours, wage=wage, fulltime=ft)).to_csv("panel.csv", index=False)
# (d) odd tiny
n = 30
pd.DataFrame(dict(dose=rng.choice([0,5,10], n, p=[.5,.3,.2]),
                  site=np.full(n, "A"),
                  score=rng.integers(40, 61, n),
                  adverse=(rng.random(n) < 0.1).astype(int),
                  group=rng.choice(["t","c"], n))).to_csv("tiny.csv", index=False)
