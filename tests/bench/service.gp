# SPDX-License-Identifier: MIT
# The service as a client meets it, from the CSV written by bench_service (bench_common.h
# columns; n = sessions): (1) stream mode, the worst session's send->result percentiles against
# the number of sessions, beside the solve time; (2) wake-ups (cyclictest and the daemon) and
# request-mode send->result (UDS, TCP, light sessions beside a hog, one light session without
# and with 50 admissions and closes a second) as p50 / p99 / p99.9 bars;
# (3) the most sessions held at 1 kHz against the peg's contacts (with no miss of the daemon's,
# and with at most 0.1 % of them).
# call: gnuplot -e "csv='service.csv'; png='service.png'" service.gp
set datafile separator ','
set terminal pngcairo size 1500,480 font ',10' noenhanced
set output png
set grid
# Rows of bench b (and variant v); how many there are (a panel without rows says so).
rows(b) = sprintf("< awk -F, '$1 == \"%s\"' '%s'", b, csv)
rowsv(b, v) = sprintf("< awk -F, '$1 == \"%s\" && $2 == \"%s\"' '%s'", b, v, csv)
bars = sprintf("< awk -F, '$1 == \"wake\" || $1 == \"request\" || " . \
               "($1 == \"hog\" && $2 ~ /worst/) || ($1 == \"churn\" && $2 ~ /^light/)' '%s'", csv)
count(f) = int(system(sprintf("%s | wc -l", f[3:])))
# Bar labels: the variant, prefixed by the bench unless the variant already names it.
barlabel(d) = strcol(1) eq 'request' || strcol(1) eq 'churn' ? strcol(2) : \
              sprintf('%s/%s', strcol(1), strcol(2))
set multiplot layout 1,3

set title 'stream mode, frames 150 us before the tick: worst session'
set xlabel 'sessions'
set ylabel 'send -> result (us)'
set logscale xy
set xrange [0.8:40]
set key top left
if (count(rowsv('stream', 'aligned/worst')) > 0) {
  plot rowsv('stream', 'aligned/worst') using 3:($5 / 1000.0) with linespoints pt 7 title 'p50', \
       '' using 3:($6 / 1000.0) with linespoints pt 5 title 'p99', \
       '' using 3:($7 / 1000.0) with linespoints pt 9 title 'p99.9', \
       '' using 3:($13 / 1000.0) with linespoints dt 2 title 'solve p50'
} else {
  set yrange [1:1000]
  set label 1 'no stream rows' at graph 0.4, graph 0.5
  plot NaN notitle
  unset label 1
  set autoscale y
}
unset logscale
unset xrange

set title 'wake-ups and request mode: p50 / p99 / p99.9'
set xlabel ''
set ylabel 'us'
set logscale y
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.7 border -1
set boxwidth 0.9
set xtics rotate by -25 scale 0
set bmargin 7
set key top left
if (count(bars) > 0) {
  plot bars using ($5 / 1000.0):xtic(barlabel(0)) title 'p50', \
       '' using ($6 / 1000.0) title 'p99', '' using ($7 / 1000.0) title 'p99.9'
} else {
  set style data lines
  set yrange [1:1000]
  set label 1 'no rows' at graph 0.4, graph 0.5
  plot NaN notitle
  unset label 1
  set autoscale y
}
unset logscale
unset style data
set xtics norotate scale 1
set bmargin
set style fill empty

set title 'sessions held at 1 kHz (stream, lemke)'
set xlabel 'contacts per session'
set ylabel 'sessions'
set xrange [0:40]
set yrange [0:34]
set key top right
# x: the contacts, from the scene name peg-N.
nc(d) = real(substr(strcol(10), 5, 9))
strict = rowsv('capacity', 'held')
tolerant = rowsv('capacity', 'held-0.1%')
ns = count(strict)
nt = count(tolerant)
if (ns > 0 && nt > 0) {
  plot tolerant using (nc(0)):3 with linespoints pt 7 ps 1.5 title '<= 0.1 % daemon misses', \
       strict using (nc(0)):3 with linespoints pt 5 ps 1.2 title 'no daemon miss', \
       tolerant using (nc(0)):3:(sprintf('%d', $3)) with labels offset 0,1 notitle
} else {
  if (nt > 0) {
    plot tolerant using (nc(0)):3 with linespoints pt 7 ps 1.5 title '<= 0.1 % daemon misses', \
         tolerant using (nc(0)):3:(sprintf('%d', $3)) with labels offset 0,1 notitle
  } else {
    if (ns > 0) {
      plot strict using (nc(0)):3 with linespoints pt 5 ps 1.2 title 'no daemon miss'
    } else {
      set label 1 'no session count held' at graph 0.3, graph 0.5
      plot NaN notitle
    }
  }
}
unset multiplot
