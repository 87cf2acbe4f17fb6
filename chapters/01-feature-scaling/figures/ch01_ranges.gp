# Chapter 1: the value range of each Boston feature on the training rows, raw and standardised.
# Data: ch01_ranges.dat, written by the lesson (index, name, raw min, raw max, scaled min, scaled
# max). The build sets the terminal and the output file.
set title "Boston features: raw ranges span three orders of magnitude; scaled ones are alike\n{/*0.85 width max - min of each feature on the 404 training rows (log axis)}"
set ylabel "max - min"
set logscale y
set format y "10^{%L}"
set yrange [0.1:2000]
set xrange [-0.6:11.6]
set xtics rotate by -35 font ",11"
set grid ytics lc rgb "#dddddd"
set key top left box opaque
set style data points
set style line 1 lc rgb "#c0392b" pt 7 ps 1.4
set style line 2 lc rgb "#2471a3" pt 5 ps 1.4
plot "ch01_ranges.dat" using 1:($4-$3):xtic(2) ls 1 title "raw", \
     "ch01_ranges.dat" using 1:($6-$5) ls 2 title "standardised"
