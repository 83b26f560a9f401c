# SPDX-License-Identifier: MIT
# Median time per call against chain length, log-log, for Baraff's factor + solve, the solve
# alone and the dense LU baseline. Reads the CSV written by bench_articulated (bench_common.h
# columns); call: gnuplot -e "csv='articulated.csv'; png='articulated.png'" articulated.gp
set datafile separator ','
set terminal pngcairo size 800,560 font ',10' noenhanced
set output png
set logscale xy
set grid
set xlabel 'hinge links N'
set ylabel 'median time per call (us)'
set key top left
rows(v) = sprintf("< awk -F, '$1 == \"articulated\" && $2 == \"%s\"' '%s'", v, csv)
set title 'Baraff 1996 on hinge chains (slope 1: linear time)'
plot for [v in 'baraff baraff-solve dense-lu'] rows(v) using 3:($5 / 1000.0) \
     with linespoints pointsize 1.2 title v
