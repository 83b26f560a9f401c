# SPDX-License-Identifier: MIT
# Overrun past the deadline (p99 and max, us) of each solver's step, one panel per scene, the
# floor (a perfectly metered loop on this host) first. Reads the CSV written by bench_deadline
# (bench_common.h columns); call: gnuplot -e "csv='deadline.csv'; png='deadline.png'" deadline.gp
set datafile separator ','
set terminal pngcairo size 1800,520 font ',10' noenhanced
set output png
set logscale y
set grid ytics
set ylabel 'return - deadline (us)'
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.6 border -1
set xtics rotate by -30
set key top left
# The scenes of this run, in order (a quick run has one).
scenes = system(sprintf("awk -F, 'NR > 1 && !seen[$10]++ {printf \"%%s \", $10}' '%s'", csv))
set multiplot layout 1,words(scenes)
do for [sc in scenes] {
  set title sc
  rows = sprintf("< awk -F, '$10 == \"%s\"' '%s'", sc, csv)
  plot rows using ($6 / 1000.0):xtic(2) title 'p99', '' using ($8 / 1000.0) title 'max'
}
unset multiplot
