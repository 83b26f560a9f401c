# SPDX-License-Identifier: MIT
# Median time per call against chain length, log-log: Baraff's factor + solve, the solve alone,
# the dense LU and Cholesky baselines, KDL's Vereshchagin and RNE and MuJoCo's mj_forward on the
# open chains (solid), and Baraff, Vereshchagin and MuJoCo with the tip tied to the world
# (dashed, same colour as the open-chain series). Reads the CSV written by bench_articulated
# (bench_common.h columns); call:
#   gnuplot -e "csv='articulated.csv'; png='articulated.png'" articulated.gp
set datafile separator ','
set terminal pngcairo size 900,620 font ',10' noenhanced
set output png
set logscale xy
set grid
set xlabel 'hinge links N'
set ylabel 'median time per call (us)'
set key top left
rows(v) = sprintf("< awk -F, '$1 == \"articulated\" && $2 == \"%s\"' '%s'", v, csv)
open = 'baraff baraff-solve dense-lu dense-chol kdl-vereshchagin kdl-rne mujoco'
loop = 'baraff-loop kdl-vereshchagin-loop mujoco-loop'
open_lc = '1 2 3 4 8 6 7'
loop_lc = '1 8 7'
set title 'Baraff 1996 on hinge chains against KDL and MuJoCo (slope 1: linear time)'
plot for [i = 1:words(open)] rows(word(open, i)) using 3:($5 / 1000.0) \
         with linespoints lc int(word(open_lc, i)) pt i pointsize 1.2 title word(open, i), \
     for [i = 1:words(loop)] rows(word(loop, i)) using 3:($5 / 1000.0) \
         with linespoints lc int(word(loop_lc, i)) pt i dt 2 pointsize 1.2 \
         title word(loop, i)
