import json
def S(target, labels, cols, **kw):
    d = {"format": "oracledp.table_schema", "version": 1, "target": {"name": target, "labels": labels},
         "columns": cols, "row_divisor": 1, "intercept": True}; d.update(kw); return d
num = lambda n, lo, hi, st: {"name": n, "type": "numeric", "lower": lo, "upper": hi, "step": st}
cat = lambda n, lv: {"name": n, "type": "categorical", "levels": lv}
json.dump(S("returned", ["no","yes"], [num("basket_value",0,1000,0.01), num("items",0,30,1),
  cat("weekday",["Mon","Tue","Wed","Thu","Fri","Sat","Sun"]), cat("store",[f"S{i:02d}" for i in range(1,16)]),
  cat("payment",["card","cash","mobile"])]), open("retail.schema.json","w"), indent=1)
json.dump(S("event", ["0","1"], [num("age",18,100,1), cat("sex",["F","M"]), num("bmi",10,70,0.1), num("sbp",60,260,1)]),
  open("clinical.schema.json","w"), indent=1)
json.dump(S("fulltime", ["no","yes"], [num("year",2018,2022,1), cat("occupation",[f"occ{i:02d}" for i in range(20)]),
  cat("sex",["F","M"]), num("hours",0,100,1), num("wage",0,500,0.01)], records_per_person=5), open("panel.schema.json","w"), indent=1)
json.dump(S("group", ["c","t"], [num("dose",0,100,1), cat("site",["A","B"]), num("score",0,100,1), num("adverse",0,1,1)]),
  open("tiny.schema.json","w"), indent=1)
