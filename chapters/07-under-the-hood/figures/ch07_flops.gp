# Chapter 7 figure: FLOPs of one GPT-2-small layer against the sequence length, on log-log axes.
# Data: ch07_flops.dat (n, attention, projections + MLP) and ch07_crossover.dat, written by the
# lesson from layer_flops() and crossover_length(). The build sets the terminal and output file.
set title "One GPT-2-small layer (d = 768, 12 heads): FLOPs against n"
set xlabel "sequence length n"
set ylabel "FLOPs per layer"
set logscale x 2
set logscale y 10
set format x "2^{%L}"
set format y "10^{%L}"
set xtics 4
set key right bottom box opaque
set grid
set xrange [64:65536]
plot 'ch07_flops.dat' using 1:3 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#3b528b' title 'projections + MLP (grow like n)', \
     '' using 1:2 with linespoints lw 2 pt 5 ps 0.6 lc rgb '#d95f02' title 'attention (grows like n^2)', \
     'ch07_crossover.dat' using 1:2 with points pt 6 ps 2 lw 2 lc rgb 'black' title 'crossover: attention = the rest'
