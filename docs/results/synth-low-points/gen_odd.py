import numpy as np, pandas as pd, json
rng = np.random.default_rng(7); n = 3000
flag = (rng.random(n) < 0.03).astype(int)
visits = rng.poisson(np.where(flag == 1, 3, 0.3))
amount = np.round(np.exp(rng.normal(3.5, 0.7, n)))
churn = np.where(rng.random(n) < np.where(flag == 1, 0.7, 0.1), "yes", "no")
pd.DataFrame(dict(flag=flag, country="NL", visits=visits, amount=amount.astype(int), churn=churn)).to_csv("odd.csv", index=False)
json.dump({"format": "oracledp.table_schema", "version": 1, "target": {"name": "churn", "labels": ["no", "yes"]},
  "columns": [{"name": "flag", "type": "numeric", "lower": 0, "upper": 1, "step": 1},
              {"name": "country", "type": "categorical", "levels": ["BE", "DE", "NL"]},
              {"name": "visits", "type": "numeric", "lower": 0, "upper": 10000, "step": 1},
              {"name": "amount", "type": "numeric", "lower": 0, "upper": 1000000, "step": 1}],
  "row_divisor": 1, "intercept": True}, open("odd.schema.json", "w"), indent=1)
