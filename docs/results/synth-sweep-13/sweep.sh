#!/bin/bash
# sweep.sh TAG DATA SCHEMA ROWS METHOD "EPS..." [extra fit args]  -> logs/TAG_METHOD_eE.{fit,eval,cmp}
TAG=$1; DATA=$2; SCHEMA=$3; ROWS=$4; METHOD=$5; EPSS=$6; shift 6
mkdir -p logs
for E in $EPSS; do
  M=m_${TAG}_${METHOD}_e$E; S=s_${TAG}_${METHOD}_e$E.csv; L=logs/${TAG}_${METHOD}_e$E
  rm -rf $M $S
  /usr/bin/time -f "wall %e s maxrss %M KB" ./run.sh synth fit $DATA --schema $SCHEMA --epsilon $E --seed 0 --method $METHOD --out $M "$@" > $L.fit 2>&1
  ./run.sh synth sample $M --rows $ROWS --seed 1 --out $S > $L.sample 2>&1
  ./run.sh synth evaluate $S $DATA --model $M $EVALARGS > $L.eval 2>&1
  echo "== $TAG $METHOD eps $E: $(grep -h 'rc=' $L.fit $L.sample $L.eval | tr '\n' ' ') $(grep wall $L.fit)"
  grep -h -A2 'this table' $L.eval | head -3
done
