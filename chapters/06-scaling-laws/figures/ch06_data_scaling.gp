# Chapter 6: held-out loss against training-set size, log-log axes; the fit on the five smallest
# sizes extrapolated, its band from 200 bootstrap refits, and the noise put in. Data written by
# the lesson. The build sets the terminal and the output file.
set title "A fit on small sizes, extrapolated\n{/*0.85 held-out MSE of width-64 MLPs on a teacher task with a known noise floor}"
set xlabel "training rows N"
set ylabel "held-out MSE"
set logscale xy
set yrange [0.06:0.4]
set ytics (0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.4)
set xrange [32:32768]
set grid xtics ytics lc rgb "#dddddd"
set key top right box opaque
set style fill transparent solid 0.25 noborder
plot "ch06_data_fit.dat" using 1:3:4 with filledcurves lc rgb "#2471a3" title "80% band of refits", \
     "ch06_data_fit.dat" using 1:2 with lines lw 2 lc rgb "#2471a3" title "E + A N^{-α}, fitted on 64..1024", \
     "ch06_data_fit.dat" using 1:5 with lines lw 2 dt 2 lc rgb "#7d3c98" title "a N^{-α} (no E)", \
     "ch06_noise.dat" using 1:2 with lines lw 1 dt 3 lc rgb "#555555" title "noise variance put in", \
     "ch06_data.dat" every ::0::4 using 1:2 with points pt 7 ps 1.4 lc rgb "#2471a3" title "fitted points", \
     "ch06_data.dat" every ::5 using 1:2 with points pt 5 ps 1.4 lc rgb "#c0392b" title "not fitted"
