import json
def num(n, lo, hi, step=1, **kw): return dict(name=n, type="numeric", lower=lo, upper=hi, step=step, **kw)
def cat(n, lv, **kw): return dict(name=n, type="categorical", levels=lv, **kw)
S = {
 "a_claims": {"target": {"name": "fraud", "labels": ["no", "yes"]}, "columns": [
    cat("policy", ["basic", "plus", "premium"]), num("vehicle_age", 0, 30),
    num("claim_amount", 0, 1_000_000), cat("channel", ["agent", "phone", "web"])]},
 "b_panel": {"target": {"name": "churned", "labels": ["no", "yes"]}, "records_per_person": 6, "columns": [
    num("week", 1, 6), cat("plan", ["free", "paid", "trial"]), num("minutes", 0, 1440), num("purchases", 0, 50)]},
 "c_houses": {"target": {"name": "above_asking", "labels": ["no", "yes"]}, "columns": [
    num("year_built", 1990, 2024), cat("zip", [94101, 94103, 94107, 94110, 94112, 94115, 94117, 94121]),
    num("price_k", 0, 5000), num("bedrooms", 1, 6)]},
 "d_credit": {"target": {"name": "default", "labels": ["no", "yes"]}, "columns": [
    num("score", 0, 1000, missing="level"), num("income_k", 0, 1000), num("tenure_years", 0, 40)]},
}
for k, v in S.items():
    json.dump(v, open(f"{k}.schema.json", "w"), indent=1)
