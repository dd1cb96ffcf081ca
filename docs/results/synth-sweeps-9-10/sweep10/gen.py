import numpy as np, pandas as pd, json
rng = np.random.default_rng(10)
# T1 shop: 3000 rows
n=3000
seg = rng.choice(["a","b","c"], n, p=[.5,.3,.2])
visits = np.minimum(rng.poisson(np.where(seg=="a",0.4,1.2)), 10000)
spend = np.where(rng.random(n) < np.where(visits==0,0.7,0.2), 0,
        np.clip(np.round(np.exp(rng.normal(4.5,0.9,n))), 5, 800))
churn = np.where(rng.random(n) < np.where(spend==0, .6, .2), "yes", "no")
pd.DataFrame(dict(segment=seg, visits=visits, spend=spend.astype(int), churn=churn)).to_csv("shop.csv", index=False)
json.dump({"target":{"name":"churn","labels":["no","yes"]},"columns":[
 {"name":"segment","type":"categorical","levels":["a","b","c"]},
 {"name":"visits","type":"numeric","lower":0,"upper":10000,"step":1},
 {"name":"spend","type":"numeric","lower":0,"upper":1000000,"step":1}]}, open("shop.schema.json","w"), indent=1)
# T2 salary: 5000 rows
n=5000
region = rng.choice(["n","s","e","w"], n)
salary = np.round(np.clip(np.exp(rng.normal(9.3,0.5,n)) + np.where(region=="n",3000,0), 1000, 30000), 1)
bonus = np.where(rng.random(n)<0.35, 0, np.clip(np.round(salary*rng.uniform(0.02,0.3,n)), 0, 5000))
bonus[rng.random(n)<0.04] = 5000
balance = np.round(rng.normal(0, 2000, n) + (salary-12000)*0.1)
hi = np.where(rng.random(n) < 1/(1+np.exp(-(salary-12000)/3000)), "yes", "no")
pd.DataFrame(dict(region=region, salary=salary, bonus=bonus.astype(int), balance=balance.astype(int), high=hi)).to_csv("salary.csv", index=False)
json.dump({"target":{"name":"high","labels":["no","yes"]},"columns":[
 {"name":"region","type":"categorical","levels":["e","n","s","w"]},
 {"name":"salary","type":"numeric","lower":0,"upper":100000,"step":0.1},
 {"name":"bonus","type":"numeric","lower":0,"upper":5000,"step":1},
 {"name":"balance","type":"numeric","lower":-100000,"upper":100000,"step":1}]}, open("salary.schema.json","w"), indent=1)
# T3 claims: 20000 rows
n=20000
age = rng.integers(18, 90, n)
nclaims = np.minimum(rng.poisson(0.3 + (age-18)/100), 10000)
amount = np.where(nclaims==0, 0, np.round(np.clip(np.exp(rng.normal(5.5,1.0,n)),20,2000)*nclaims, 2))
amount = np.minimum(amount, 10000)
fraud = np.where(rng.random(n) < np.where(amount>1000, .3, .05), "yes", "no")
pd.DataFrame(dict(age=age, nclaims=nclaims, amount=amount, fraud=fraud)).to_csv("claims.csv", index=False)
json.dump({"target":{"name":"fraud","labels":["no","yes"]},"columns":[
 {"name":"age","type":"numeric","lower":0,"upper":120,"step":1},
 {"name":"nclaims","type":"numeric","lower":0,"upper":10000,"step":1},
 {"name":"amount","type":"numeric","lower":0,"upper":10000,"step":0.01}]}, open("claims.schema.json","w"), indent=1)
# T4 small: 800 rows
n=800
hours = np.clip(np.round(rng.normal(38, 9, n)), 0, 60); hours[rng.random(n)<0.05]=60
income = np.round(np.clip(np.exp(rng.normal(9.4,0.5,n)) + hours*100, 1000, 30000))
plan = rng.choice(["basic","plus","pro"], n, p=[.6,.3,.1])
y = np.where(rng.random(n) < np.where(income>15000,.7,.3),"yes","no")
pd.DataFrame(dict(plan=plan, hours=hours.astype(int), income=income.astype(int), y=y)).to_csv("small.csv", index=False)
json.dump({"target":{"name":"y","labels":["no","yes"]},"columns":[
 {"name":"plan","type":"categorical","levels":["basic","plus","pro"]},
 {"name":"hours","type":"numeric","lower":0,"upper":60,"step":1},
 {"name":"income","type":"numeric","lower":0,"upper":1000000,"step":1}]}, open("small.schema.json","w"), indent=1)
for t in ["shop","salary","claims","small"]:
    d=pd.read_csv(t+".csv"); print(t, d.shape); print(d.describe().T[["min","50%","max","mean"]])
