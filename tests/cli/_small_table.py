"""The small public table the command-line tests fit on: two features (a numeric on a grid, a
categorical), two labels, six rows that a halfspace separates."""

SCHEMA = {
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [
        {"name": "x", "type": "numeric", "lower": 0, "upper": 10, "step": 1},
        {"name": "c", "type": "categorical", "levels": ["a", "b"]},
    ],
}
ROWS = ["1,a,no", "9,b,yes", "5,a,no", "3,b,yes", "7,b,yes", "2,a,no"]
