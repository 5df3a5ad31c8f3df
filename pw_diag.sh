XG_SB_RUNS=and:1 bash tests/gpu/run.sh servebatches > /dev/null 2>&1
export LD_LIBRARY_PATH=$PWD/.xapian-rt/usr/lib/x86_64-linux-gnu
B=build-dev/plugin/xapian-gpu
cp .device-carry/realtext/trec-tb-2005-efficiency.tsv /tmp/q50k.tsv
head -10000 /tmp/q50k.tsv > /tmp/q10k.tsv
for op in or and; do
  q=/tmp/q10k.tsv; [ $op = and ] && q=/tmp/q50k.tsv
  for th in 16 64; do for w in 1 0; do
    $B bench --db /tmp/xg-realtext --queries $q -k 10 --op $op --threads $th --engines xapian,plugin --batch-wait $w --repeat 3 > /tmp/pw.log 2>&1
    echo "$op threads $th wait $w: $(grep -E '^(xapian|plugin) ' /tmp/pw.log | head -2 | awk '{printf "%s %s q/s p50 %s p99 %s; ", $1, $3, $5, $6}') $(grep -i 'passes\|pass_qps' /tmp/pw.log | head -2 | tr '\n' ' ') $(grep -o 'different [0-9]*' /tmp/pw.log)"
  done; done
done
