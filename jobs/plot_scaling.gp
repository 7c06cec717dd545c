# plot_scaling.gp - the plots of a scaling study: for each of strong and weak
# scaling present in the table, one figure of three panels against the rank
# count: median time per run, speedup, parallel efficiency; one curve per
# series (kind-type-op-mode). PNG and SVG.
#
#   gnuplot -e "csv='RESULTS/scaling.csv'; out='RESULTS/scaling'" jobs/plot_scaling.gp
#
# writes OUT-strong.png, OUT-strong.svg, OUT-weak.png, OUT-weak.svg. The
# table is what jobs/scaling_lib.sh writes (gs_scaling_table):
#   study,series,ranks,elements,time_us,gbps_rank,gbps_total,ceiling_pct,wrong,speedup,efficiency
# PNG needs gnuplot's pngcairo or png terminal; without either, SVG only.

if (!exists("csv")) csv = "scaling.csv"
if (!exists("out")) out = "scaling"

# the table's columns
c_study = 1; c_series = 2; c_ranks = 3; c_time = 5; c_speedup = 10; c_efficiency = 11

has(term) = strstrt(" ".GPVAL_TERMINALS." ", " ".term." ") > 0
width = 1500; height = 480
png = has("pngcairo") ? sprintf("pngcairo size %d,%d enhanced font 'sans,10'", width, height) \
    : has("png") ? sprintf("png size %d,%d", width, height) : ""
svg = has("svg") ? sprintf("svg size %d,%d dynamic enhanced font 'sans,10'", width, height) : ""
if (png eq "") print "plot_scaling.gp: this gnuplot has no png or pngcairo terminal: SVG only"

set encoding utf8
set datafile separator comma
set grid
set key top left box opaque
set xlabel "MPI ranks (one GPU each on the CUDA backend)"
set pointsize 1.2

# a point of one curve: its x where the row belongs to the study and series, else none
in_curve(study, series) = strcol(c_study) eq study && strcol(c_series) eq series ? column(c_ranks) : NaN

do for [study in "strong weak"] {
    series = system(sprintf("awk -F, 'NR > 1 && $%d == \"%s\" { print $%d }' '%s' | sort -u | tr '\\n' ' '", \
                            c_study, study, c_series, csv))
    if (words(series) > 0) {
        stats csv using (strcol(c_study) eq study ? column(c_ranks) : NaN) nooutput
        max_ranks = STATS_max
        if (max_ranks <= 16) { set xtics 1 } else { set xtics autofreq }
        do for [format in "png svg"] {
            terminal = format eq "png" ? png : svg
            if (terminal ne "") {
                eval("set terminal ".terminal)
                set output sprintf("%s-%s.%s", out, study, format)
                set multiplot layout 1,3 title sprintf("gpuscan bench: %s scaling (%s)", study, \
                    study eq "strong" ? "fixed global size" : "fixed size per rank")
                set xrange [0.8:max_ranks + 0.2]

                set title "median time per run"
                set ylabel "time (µs)"
                set yrange [0:*]
                plot for [s in series] csv using (in_curve(study, s)):(column(c_time)) \
                     with linespoints title s

                set title study eq "strong" ? "speedup" : "scaled speedup (P · T_1 / T_P)"
                set ylabel "speedup"
                eval(sprintf("set yrange [0:%g<*]", max_ranks + 0.5))
                plot for [s in series] csv using (in_curve(study, s)):(column(c_speedup)) \
                     with linespoints title s, \
                     x with lines dashtype 2 linecolor "gray40" title "ideal"

                set title "parallel efficiency"
                set ylabel "efficiency (%)"
                set yrange [0:110<*]
                set key bottom left
                plot for [s in series] csv using (in_curve(study, s)):(100 * column(c_efficiency)) \
                     with linespoints title s, \
                     100 with lines dashtype 2 linecolor "gray40" title "ideal"

                unset multiplot
                set key top left
                set output
                print sprintf("plot_scaling.gp: %s-%s.%s", out, study, format)
            }
        }
    }
}
