import numpy as np, pandas as pd, json, os
os.chdir('/tmp/sweep11/a')
rng = np.random.default_rng(20261211)
def dump(name, obj): open(name,'w').write(json.dumps(obj, indent=1))

# 1. tiny tables
tiny_schema = {"target":{"name":"y","labels":["no","yes"]},"columns":[
 {"name":"sex","type":"categorical","levels":["f","m"]},
 {"name":"region","type":"categorical","levels":["north","south","west"]},
 {"name":"age","type":"numeric","lower":0,"upper":100,"step":1},
 {"name":"score","type":"numeric","lower":0,"upper":10,"step":0.5}]}
dump('tiny.schema.json', tiny_schema)
for n in [1,2,5,12,20]:
    df = pd.DataFrame({"sex":rng.choice(["f","m"],n),"region":rng.choice(["north","south","west"],n),
        "age":rng.integers(18,90,n),"score":rng.integers(0,21,n)/2,"y":rng.choice(["no","yes"],n)})
    df.to_csv(f'tiny{n}.csv',index=False)

# 2. panel 600 x 4
P=600; pid=np.repeat(np.arange(1,P+1),4); year=np.tile([2019,2020,2021,2022],P)
base_age=np.repeat(rng.integers(20,70,P),4); age=base_age+(year-2019)
emp=np.repeat(rng.random(P)<0.7,4) ^ (rng.random(4*P)<0.1)
inc=np.where(emp, np.round(rng.lognormal(10.5,0.5,4*P),-2), 0).clip(0,300000)
region=np.repeat(rng.choice(["a","b","c","d"],P),4)
y=np.where(rng.random(4*P)< 0.2+0.4*emp,"yes","no")
pan=pd.DataFrame({"person_id":pid,"year":year,"age":age,"employed":np.where(emp,"yes","no"),"income":inc.astype(int),"region":region,"y":y})
pan.to_csv('panel_with_id.csv',index=False)
pan.drop(columns="person_id").to_csv('panel.csv',index=False)
dump('panel.schema.json',{"records_per_person":4,"target":{"name":"y","labels":["no","yes"]},"columns":[
 {"name":"year","type":"categorical","levels":[2019,2020,2021,2022]},
 {"name":"age","type":"numeric","lower":18,"upper":100,"step":1},
 {"name":"employed","type":"categorical","levels":["no","yes"]},
 {"name":"income","type":"numeric","lower":0,"upper":300000,"step":100},
 {"name":"region","type":"categorical","levels":["a","b","c","d"]}]})

# 3. wide: 40 ordinal 0-9 + 60-level nominal
n=3000; latent=rng.normal(size=n)
cols={}
for j in range(40):
    v=np.clip(np.round(4.5+2*(0.6*latent+0.8*rng.normal(size=n))),0,9).astype(int); cols[f"q{j:02d}"]=v
nom=rng.choice(60,n,p=np.r_[np.full(10,0.06),np.full(50,0.008)])
cols["dept"]=[f"D{k:02d}" for k in nom]
cols["y"]=np.where(latent+rng.normal(size=n)>0,"yes","no")
pd.DataFrame(cols).to_csv('wide.csv',index=False)
sc=[{"name":f"q{j:02d}","type":"numeric","lower":0,"upper":9,"step":1} for j in range(40)]
sc.append({"name":"dept","type":"categorical","levels":[f"D{k:02d}" for k in range(60)]})
dump('wide.schema.json',{"target":{"name":"y","labels":["no","yes"]},"columns":sc})

# 4. odd columns
n=2000
odd=pd.DataFrame({
 "const":["x"]*n,
 "grade":rng.choice(["A","B","C"],n,p=[.5,.3,.2]),      # declared A..F
 "flag":rng.choice([True,False],n),
 "code":rng.choice(["01","02","03","10"],n),
 "amount":np.where(rng.random(n)<0.4,0,np.round(rng.lognormal(5,1,n))).astype(int),  # declared 0..1e9
 "day":pd.to_datetime("2024-01-01")+pd.to_timedelta(rng.integers(0,366,n),unit="D"),
 "bp":np.where(rng.random(n)<0.05,np.nan,np.round(rng.normal(120,15,n))),
 "y":rng.choice(["no","yes"],n)})
odd["day"]=odd["day"].dt.strftime("%Y-%m-%d")
odd.to_csv('odd.csv',index=False)
odd_schema={"target":{"name":"y","labels":["no","yes"]},"columns":[
 {"name":"const","type":"categorical","levels":["x"]},
 {"name":"grade","type":"categorical","levels":["A","B","C","D","E","F"]},
 {"name":"flag","type":"categorical","levels":["False","True"]},
 {"name":"code","type":"categorical","levels":["01","02","03","10"]},
 {"name":"amount","type":"numeric","lower":0,"upper":1000000000,"step":1},
 {"name":"dayn","type":"numeric","lower":0,"upper":365,"step":1},
 {"name":"bp","type":"numeric","lower":40,"upper":250,"step":1,"missing":"level"}]}
o2=odd.copy(); o2["dayn"]=(pd.to_datetime(o2.pop("day"))-pd.Timestamp("2024-01-01")).dt.days
o2=o2[["const","grade","flag","code","amount","dayn","bp","y"]]
o2.to_csv('odd2.csv',index=False)
dump('odd2.schema.json',odd_schema)
s3=json.loads(json.dumps(odd_schema)); s3["columns"][-1].pop("missing"); dump('odd2_nomissing.schema.json',s3)
print("ok")
