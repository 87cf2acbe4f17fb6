# Chapter 6: train and test accuracy against width on digits, real and shuffled training labels.
# Data written by the lesson. The build sets the terminal and the output file.
set title "Wide enough, a network fits random labels too\n{/*0.85 500 training digits; test accuracy on 500 others with their real labels}"
set xlabel "hidden width"
set ylabel "accuracy (%)"
set logscale x 2
set xrange [3:700]
set yrange [0:105]
set grid xtics ytics lc rgb "#dddddd"
set key at graph 0.98, graph 0.72 right box opaque
plot "ch06_memorisation.dat" using 1:2 with linespoints lw 2 pt 7 lc rgb "#2471a3" title "real labels, train", \
     "ch06_memorisation.dat" using 1:3 with linespoints lw 2 pt 5 dt 2 lc rgb "#2471a3" title "real labels, test", \
     "ch06_memorisation.dat" using 1:4 with linespoints lw 2 pt 7 lc rgb "#c0392b" title "shuffled labels, train", \
     "ch06_memorisation.dat" using 1:5 with linespoints lw 2 pt 5 dt 2 lc rgb "#c0392b" title "shuffled labels, test", \
     10 with lines dt 3 lc rgb "#555555" title "chance"
