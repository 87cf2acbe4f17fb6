# Chapter 7 figure: working memory of naive and tiled attention against n, on log-log axes.
# Data: ch07_memory.dat (attention_memory() for d_v = 64, tiles of 128, doubles) and
# ch07_memory_measured.dat (heap bytes live at once, counted by the lesson's allocation meter).
set title "Working memory of one attention head (d = 64, doubles)"
set xlabel "sequence length n"
set ylabel "bytes"
set logscale x 2
set logscale y 2
set format x "2^{%L}"
set format y "2^{%L}"
set xtics 4
set ytics 16
set xrange [64:131072]
set key below maxrows 2 width -6
set grid
plot 'ch07_memory.dat' using 1:2 with lines lw 2 lc rgb '#d95f02' title 'naive: the n x n scores (formula)', \
     '' using 1:3 with lines lw 2 lc rgb '#1b9e77' title 'tiled: one tile and one query block (formula)', \
     'ch07_memory_measured.dat' using 1:2 with points pt 7 ps 1 lc rgb '#d95f02' title 'naive, measured peak', \
     '' using 1:3 with points pt 5 ps 1 lc rgb '#1b9e77' title 'tiled, measured peak (includes its output)'
