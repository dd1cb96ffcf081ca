"""The five home-made tables of a new-user sweep (seed 7): a-e, written as CSV with their
schemas into the directory given (default: the current one).

    python docs/results/synth-far-tails/gen.py OUT_DIR
"""
import json
import os
import sys

import numpy as np
import pandas as pd

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(7)
def save(name, df, cols, target):
    df.to_csv(os.path.join(OUT, f"{name}.csv"), index=False)
    with open(os.path.join(OUT, f"{name}.schema.json"), "w") as f:
        json.dump({"target": target, "columns": cols}, f, indent=1)

# (a) dependent pairs + 30-level column
n=1500
city = rng.integers(0,30,n)
country = np.array(["A","B","C","D","E"])[city//6]          # deterministic function of city
noise = rng.random(n)<0.05
country = np.where(noise, rng.choice(["A","B","C","D","E"], n), country)
score = np.clip(np.round(rng.normal(50,15,n)),0,100).astype(int)   # independent of city
hours = np.clip(np.round(score*0.6 + rng.normal(0,5,n)),0,100).astype(int)  # strongly dep on score
pet = rng.choice(["cat","dog","none"], n, p=[.3,.3,.4])         # independent
y = np.where(rng.random(n) < 1/(1+np.exp(-(score-50)/8)), "yes","no")
dfa = pd.DataFrame(dict(city=[f"c{c:02d}" for c in city], country=country, score=score, hours=hours, pet=pet, y=y))
save("a", dfa, [
 {"name":"city","type":"categorical","levels":[f"c{c:02d}" for c in range(30)]},
 {"name":"country","type":"categorical","levels":list("ABCDE")},
 {"name":"score","type":"numeric","lower":0,"upper":100,"step":1},
 {"name":"hours","type":"numeric","lower":0,"upper":100,"step":1},
 {"name":"pet","type":"categorical","levels":["cat","dog","none"]}],
 {"name":"y","labels":["no","yes"]})

# (b) skewed money column
n=2000
member = rng.choice(["basic","silver","gold"], n, p=[.6,.3,.1])
pbuy = np.where(member=="gold", .8, np.where(member=="silver", .4, .15))
buy = rng.random(n) < pbuy
spend = np.where(buy, np.round(np.exp(rng.normal(4,1.2,n))), 0).astype(int)
spend = np.minimum(spend, 20000)
channel = np.where(buy, rng.choice(["web","app","store"], n, p=[.5,.3,.2]), rng.choice(["web","app","store"], n, p=[.2,.2,.6]))
region = rng.choice(["N","S","E","W"], n)
churn = np.where(rng.random(n) < np.where(buy, .1, .4), "yes","no")
dfb = pd.DataFrame(dict(spend=spend, member=member, channel=channel, region=region, churn=churn))
save("b", dfb, [
 {"name":"spend","type":"numeric","lower":0,"upper":100000,"step":1},
 {"name":"member","type":"categorical","levels":["basic","silver","gold"]},
 {"name":"channel","type":"categorical","levels":["web","app","store"]},
 {"name":"region","type":"categorical","levels":["N","S","E","W"]}],
 {"name":"churn","labels":["no","yes"]})

# (c) values far above the declared lower bound
n=1500
age = rng.integers(40,91,n)
income = np.round(np.clip(rng.lognormal(np.log(60000),0.5,n),20000,200000),-2).astype(int)
sex = rng.choice(["f","m"], n)
smoker = np.where(rng.random(n) < np.where(age>65,.1,.3), "yes","no")
y = np.where(rng.random(n) < 1/(1+np.exp(-(age-65)/6)), "yes","no")
dfc = pd.DataFrame(dict(age=age, income=income, sex=sex, smoker=smoker, y=y))
save("c", dfc, [
 {"name":"age","type":"numeric","lower":0,"upper":120,"step":1},
 {"name":"income","type":"numeric","lower":0,"upper":1000000,"step":100},
 {"name":"sex","type":"categorical","levels":["f","m"]},
 {"name":"smoker","type":"categorical","levels":["no","yes"]}],
 {"name":"y","labels":["no","yes"]})

# (d) bimodal numeric, mode set by group
n=1500
grp = rng.choice(["lo","hi"], n, p=[.55,.45])
x = np.where(grp=="lo", rng.normal(20,3,n), rng.normal(70,5,n))
x = np.round(np.clip(x,0,100),1)
site = rng.choice(["s1","s2","s3"], n)
y = np.where(rng.random(n) < np.where(grp=="hi", .7, .2), "yes","no")
dfd = pd.DataFrame(dict(x=x, grp=grp, site=site, y=y))
save("d", dfd, [
 {"name":"x","type":"numeric","lower":0,"upper":100,"step":0.1},
 {"name":"grp","type":"categorical","levels":["hi","lo"]},
 {"name":"site","type":"categorical","levels":["s1","s2","s3"]}],
 {"name":"y","labels":["no","yes"]})

# (e) numeric with missing level; missingness depends on a category
n=1200
clinic = rng.choice(["k1","k2","k3"], n, p=[.5,.3,.2])
lab = np.clip(np.round(rng.gamma(4,25,n)),0,500)
pmiss = np.where(clinic=="k3", .7, .1)
lab = np.where(rng.random(n)<pmiss, np.nan, lab)
sex = rng.choice(["f","m"], n)
y = np.where(rng.random(n) < np.where(np.nan_to_num(lab,nan=0)>120,.6,.2), "yes","no")
dfe = pd.DataFrame(dict(lab=lab, clinic=clinic, sex=sex, y=y))
dfe["lab"] = dfe["lab"].astype("Int64")
save("e", dfe, [
 {"name":"lab","type":"numeric","lower":0,"upper":500,"step":1,"missing":"level"},
 {"name":"clinic","type":"categorical","levels":["k1","k2","k3"]},
 {"name":"sex","type":"categorical","levels":["f","m"]}],
 {"name":"y","labels":["no","yes"]})
