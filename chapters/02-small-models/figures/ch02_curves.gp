# Chapter 2: validation MAE over 500 epochs (mean of 4 folds), raw and smoothed, with the epoch
# where the smoothed curve is lowest. Data: ch02_curves.dat, ch02_smoothed.dat and ch02_best.dat,
# written by the
# lesson. The build sets the terminal and the output file.
set title "Validation error stops improving long before training error does\n{/*0.85 Boston, Dense(64)-Dense(64)-Dense(1), mean over 4 folds}"
set xlabel "epoch"
set ylabel "mean absolute error ($1000s)"
set xrange [0:500]
set yrange [0:5]
set grid xtics ytics lc rgb "#dddddd"
set key top right box opaque
set style line 1 lc rgb "#7f8c8d" lw 1.5
set style line 2 lc rgb "#f1948a" lw 1
set style line 3 lc rgb "#c0392b" lw 2.5
set style line 4 lc rgb "#2471a3" pt 7 ps 1.6
plot "ch02_curves.dat" using 1:2 with lines ls 1 title "training MAE", \
     "ch02_curves.dat" using 1:3 with lines ls 2 title "validation MAE", \
     "ch02_smoothed.dat" using 1:2 with lines ls 3 title "validation, smoothed (0.9)", \
     "ch02_best.dat" using 1:2 with points ls 4 title "lowest smoothed"
