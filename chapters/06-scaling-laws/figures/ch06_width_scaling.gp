# Chapter 6: validation loss against the hidden width, 16384 training rows, with the fit of 6.2.
# Data written by the lesson. The build sets the terminal and the output file.
set title "Loss against width\n{/*0.85 one hidden ReLU layer, 16384 training rows}"
set xlabel "hidden width W"
set ylabel "held-out MSE"
set logscale xy
set yrange [0.08:0.2]
set ytics (0.08, 0.1, 0.12, 0.15, 0.2)
set xrange [0.8:320]
set grid xtics ytics lc rgb "#dddddd"
set key top right box opaque
plot "ch06_width_fit.dat" using 1:2 with lines lw 2 lc rgb "#2471a3" title "E + A W^{-α}", \
     "ch06_width_noise.dat" using 1:2 with lines lw 1 dt 3 lc rgb "#555555" title "noise variance put in", \
     "ch06_width.dat" using 1:2 with points pt 7 ps 1.4 lc rgb "#c0392b" title "measured"
