#!/bin/bash
# usage: run.sh table eps seed [method]
t=$1; e=$2; s=$3; m=${4:-oracle-query-pgm}; tag=$t-e$e-s$s-$m
O=/work/main/.venv/bin/oracledp
n=$(($(wc -l < $t.csv)-1))
/usr/bin/time -f "%e s" $O synth fit $t.csv --schema $t.schema.json --epsilon $e --seed $s --method $m --out m-$tag --force > fit-$tag.out 2> fit-$tag.err
echo "fit rc=$? $(tail -1 fit-$tag.err)"
$O synth sample m-$tag --rows $n --seed 1 --out syn-$tag.csv --force 2> sample-$tag.err; echo "sample rc=$?"
$O synth evaluate syn-$tag.csv $t.csv --model m-$tag > eval-$tag.out 2> eval-$tag.err; echo "eval rc=$?"
/work/main/.venv/bin/python judge.py $t.csv syn-$tag.csv $t.schema.json > judge-$tag.out; cat judge-$tag.out
