/// The HTML report's script: reads the embedded report and draws every chart as inline SVG.
/// Plain ES2017, no library, no network.
enum HTMLReportScript {
    static let source = #"""
        (function () {
          "use strict";
          var SVG = "http://www.w3.org/2000/svg";
          var charts = 0;
          var failures = [];
          window.addEventListener("error", function (event) {
            failures.push(String(event.message));
            document.body.setAttribute("data-render", "error: " + failures.join("; "));
          });

          function el(tag, attrs, parent, text) {
            var node = document.createElement(tag);
            for (var key in attrs || {}) node.setAttribute(key, attrs[key]);
            if (text !== undefined) node.textContent = text;
            if (parent) parent.appendChild(node);
            return node;
          }
          function svgEl(tag, attrs, parent, text) {
            var node = document.createElementNS(SVG, tag);
            for (var key in attrs || {}) node.setAttribute(key, String(attrs[key]));
            if (text !== undefined) node.textContent = text;
            if (parent) parent.appendChild(node);
            return node;
          }
          function tip(node, text) { svgEl("title", {}, node, text); return node; }
          function newChart(parent, name, width, height) {
            charts += 1;
            return svgEl("svg", { "class": "lp-chart", "data-chart": name, width: width, height: height,
              viewBox: "0 0 " + width + " " + height, role: "img" }, parent);
          }
          function fmt(ns) {
            if (ns === null || ns === undefined) return "–";
            function sig(v) { return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2); }
            if (ns < 1e3) return ns.toFixed(0) + " ns";
            if (ns < 1e6) return sig(ns / 1e3) + " µs";
            if (ns < 1e9) return sig(ns / 1e6) + " ms";
            return sig(ns / 1e9) + " s";
          }
          function baseName(path) { var parts = String(path).split("/"); return parts[parts.length - 1]; }
          function category(name) {
            if (name === "exec" || name.indexOf("loader.") === 0) return "loader";
            if (name.indexOf("program.") === 0) return "program";
            if (name === "extendedLaunch") return "extendedLaunch";
            return "app";
          }
          function label(phase) {
            var text = phase.name;
            if (phase.object) text += " " + baseName(phase.object);
            if (phase.task) text += " " + phase.task;
            if (phase.image !== undefined && phase.image !== null) text = "[" + phase.image + "] " + text;
            return text;
          }
          function median(values) {
            if (!values.length) return null;
            var sorted = values.slice().sort(function (a, b) { return a - b; });
            return sorted[Math.floor((sorted.length - 1) / 2)];
          }
          function niceStep(range, target) {
            var raw = Math.max(range / Math.max(target, 1), 1);
            var power = Math.pow(10, Math.floor(Math.log10(raw)));
            var steps = [1, 2, 5, 10];
            for (var i = 0; i < steps.length; i++) if (steps[i] * power >= raw) return steps[i] * power;
            return 10 * power;
          }
          function axis(svg, x0, width, y, maxNs, height, minNs) {
            var lo = minNs || 0;
            var step = niceStep(maxNs - lo, 6);
            for (var t = Math.ceil(lo / step) * step; t <= maxNs + 1e-9; t += step) {
              var x = x0 + (t - lo) / (maxNs - lo) * width;
              svgEl("line", { "class": "grid", x1: x, x2: x, y1: 0, y2: height }, svg);
              svgEl("text", { "class": "axis", x: x, y: y, "text-anchor": "middle" }, svg, fmt(t));
            }
          }
          function section(parent, title, note) {
            var node = el("section", {}, parent);
            el("h2", {}, node, title);
            if (note) el("p", { "class": "note" }, node, note);
            return node;
          }

          var report = JSON.parse(document.getElementById("lp-report").textContent);
          var runs = report.runs || [];
          var summary = report.summary || { phases: [] };
          var main = document.getElementById("lp-main");
          main.textContent = "";
          document.getElementById("lp-subtitle").textContent =
            [report.target.path].concat(report.target.arguments || []).join(" ") + " — " + summary.runs + " runs, " +
            (report.mode.warmup ? report.mode.warmup + " warm-up, " : "") + (report.mode.cold ? "cold" : "warm") +
            ", ready at " + report.mode.readiness + " — " + report.host.cpu + ", " + report.host.cores + " CPUs, Linux " +
            report.host.kernel + ", " + report.host.libc;

          // Headline metrics.
          (function () {
            var node = section(main, "Metrics", "Across " + summary.runs + " runs" +
              (summary.failedRuns ? " (" + summary.failedRuns + " failed)" : "") + "; times from the spawn.");
            var table = el("table", {}, node);
            var head = el("tr", {}, table);
            ["metric", "median", "min", "p90", "max", "runs"].forEach(function (name) { el("th", {}, head, name); });
            [["time to main", "timeToMainNs"], ["time to first frame", "timeToFirstFrameNs"],
             ["extended launch", "extendedLaunchNs"], ["optimized time to first frame", "optimizedTimeToFirstFrameNs"],
             ["resume time", "resumeTimeNs"], ["exit", "exitNs"], ["tracer stops", "tracerPauseNs"]].forEach(function (pair) {
              var stats = summary[pair[1]];
              if (!stats) return;
              var row = el("tr", {}, table);
              el("td", {}, row, pair[0]);
              [stats.median, stats.min, stats.p90, stats.max].forEach(function (v) { el("td", { "class": "num" }, row, fmt(v)); });
              el("td", { "class": "num" }, row, String(stats.count));
            });
          })();

          // Phase waterfall: the median, or any run.
          function waterfallRows(phases) {
            return phases.map(function (p) {
              return { label: label(p), start: p.startNs, dur: p.durationNs, cat: category(p.name) };
            });
          }
          var medianRows = (summary.phases || []).map(function (p) {
            return { label: label(p), start: p.startNs.median, dur: p.durationNs.median, cat: category(p.name) };
          });
          function drawWaterfall(holder, rows, name) {
            holder.textContent = "";
            var labelWidth = 250, width = 640, rowHeight = 18, top = 22;
            var end = 1;
            rows.forEach(function (r) { end = Math.max(end, r.start + r.dur); });
            var height = top + rows.length * rowHeight + 6;
            var svg = newChart(holder, name, labelWidth + width + 90, height);
            axis(svg, labelWidth, width, 12, end, height);
            rows.forEach(function (r, i) {
              var y = top + i * rowHeight;
              svgEl("text", { x: 0, y: y + 12 }, svg, r.label);
              var x = labelWidth + r.start / end * width;
              if (r.dur > 0) {
                tip(svgEl("rect", { "class": "phase cat-" + r.cat, x: x, y: y + 3, width: Math.max(r.dur / end * width, 1),
                  height: rowHeight - 6, rx: 2 }, svg), r.label + ": " + fmt(r.dur) + " from " + fmt(r.start));
                svgEl("text", { "class": "axis", x: labelWidth + width + 8, y: y + 12 }, svg, fmt(r.dur));
              } else {
                tip(svgEl("line", { "class": "instant", x1: x, x2: x, y1: y + 1, y2: y + rowHeight - 1 }, svg),
                  r.label + " at " + fmt(r.start));
                svgEl("text", { "class": "axis", x: labelWidth + width + 8, y: y + 12 }, svg, "at " + fmt(r.start));
              }
            });
          }
          (function () {
            var node = section(main, "Phase waterfall",
              "Each bar starts at its median start and lasts its median duration (medians come from different runs).");
            var legend = el("p", { "class": "legend" }, node);
            [["loader", "loader"], ["program", "program"], ["app phases", "app"], ["extended launch", "extended"]].forEach(function (pair) {
              var item = el("span", {}, legend);
              el("i", { style: "background: var(--" + pair[1] + ")" }, item);
              item.appendChild(document.createTextNode(pair[0]));
            });
            var pick = el("label", {}, node, "Show ");
            var select = el("select", { id: "lp-waterfall-select" }, pick);
            el("option", { value: "median" }, select, "median of " + summary.runs + " runs");
            runs.forEach(function (run, i) { el("option", { value: String(i) }, select, "run " + run.index + " (pid " + run.pid + ")"); });
            var holder = el("div", { id: "lp-waterfall" }, node);
            drawWaterfall(holder, medianRows, "waterfall");
            select.addEventListener("change", function () {
              var value = select.value;
              drawWaterfall(holder, value === "median" ? medianRows : waterfallRows(runs[Number(value)].phases), "waterfall");
              charts -= 1;  // the same chart, redrawn
            });
          })();

          // Every run at a glance.
          (function () {
            if (!runs.length) return;
            var shown = runs.slice(0, 300);
            var node = section(main, "Every run", "One row per run: its phases from the spawn, the first frame in red." +
              (shown.length < runs.length ? " The first " + shown.length + " of " + runs.length + " runs." : ""));
            var labelWidth = 70, width = 820, rowHeight = shown.length > 40 ? 9 : 14, top = 22, end = 1;
            var labelEvery = Math.ceil(12 / rowHeight);
            shown.forEach(function (run) { run.phases.forEach(function (p) { end = Math.max(end, p.startNs + p.durationNs); }); });
            var height = top + shown.length * rowHeight + 4;
            var svg = newChart(node, "runs", labelWidth + width + 10, height);
            axis(svg, labelWidth, width, 12, end, height);
            shown.forEach(function (run, i) {
              var y = top + i * rowHeight;
              if (i % labelEvery === 0) svgEl("text", { "class": "axis", x: 0, y: y + rowHeight - 3 }, svg, "run " + run.index);
              run.phases.forEach(function (p) {
                var x = labelWidth + p.startNs / end * width;
                if (p.durationNs > 0) {
                  tip(svgEl("rect", { "class": "run-phase cat-" + category(p.name), x: x, y: y + 1,
                    width: Math.max(p.durationNs / end * width, 0.5), height: rowHeight - 2, "fill-opacity": 0.8 }, svg),
                    "run " + run.index + " " + label(p) + ": " + fmt(p.durationNs));
                } else if (p.name === "firstFrame" || p.name === "windowMapped") {
                  svgEl("line", { "class": "instant", x1: x, x2: x, y1: y, y2: y + rowHeight }, svg);
                }
              });
            });
          })();

          // Distribution of time to first frame.
          function strip(svg, values, x0, width, maxNs, y, h, extraClass, name, minNs) {
            var lo = minNs || 0;
            function at(v) { return x0 + (v - lo) / (maxNs - lo) * width; }
            values.forEach(function (v, i) {
              var jitter = ((i * 0.618033988749895) % 1) * (h - 8) + 4;
              tip(svgEl("circle", { "class": "run-dot" + (extraClass ? " " + extraClass : ""), cx: at(v.value),
                cy: y + jitter, r: 3.5 }, svg), name + " run " + v.run + ": " + fmt(v.value));
            });
            var m = median(values.map(function (v) { return v.value; }));
            if (m !== null) {
              tip(svgEl("line", { "class": "median-line", x1: at(m), x2: at(m), y1: y, y2: y + h }, svg), "median " + fmt(m));
            }
          }
          (function () {
            // A prewarmed launch's time from the spawn includes the hold: it is compared below instead.
            var prewarmedCount = runs.filter(function (r) { return r.metrics.optimizedTimeToFirstFrameNs !== undefined; }).length;
            var values = runs.filter(function (r) {
              return r.metrics.timeToFirstFrameNs !== undefined && r.metrics.optimizedTimeToFirstFrameNs === undefined;
            }).map(function (r) { return { run: r.index, value: r.metrics.timeToFirstFrameNs }; });
            var node = section(main, "Time to first frame",
              (values.length ? "Histogram and one dot per run (dashed: the median)." : "No ordinary run reached its first frame.") +
              (prewarmedCount ? " " + prewarmedCount + " prewarmed launches are compared in their own section." : ""));
            if (!values.length) return;
            var lo = Math.min.apply(null, values.map(function (v) { return v.value; }));
            var hi = Math.max.apply(null, values.map(function (v) { return v.value; }));
            var bin = niceStep(Math.max(hi - lo, 1), Math.min(24, Math.max(4, Math.ceil(Math.sqrt(values.length)) * 2)));
            var first = Math.floor(lo / bin) * bin, last = Math.floor(hi / bin) * bin + bin;
            var counts = [];
            for (var b = first; b < last - 1e-9; b += bin) counts.push(0);
            values.forEach(function (v) { counts[Math.min(Math.floor((v.value - first) / bin), counts.length - 1)] += 1; });
            var x0 = 40, width = 760, height = 170, top = 10, plot = 130;
            var svg = newChart(node, "ttff-histogram", x0 + width + 20, height);
            var most = Math.max.apply(null, counts);
            var barWidth = width / counts.length;
            counts.forEach(function (count, i) {
              var h = count / most * plot;
              tip(svgEl("rect", { "class": "hist-bar", "data-count": count, x: x0 + i * barWidth + 1, y: top + plot - h,
                width: Math.max(barWidth - 2, 1), height: h }, svg),
                fmt(first + i * bin) + " – " + fmt(first + (i + 1) * bin) + ": " + count + " runs");
            });
            svgEl("text", { "class": "axis", x: x0 - 6, y: top + 10, "text-anchor": "end" }, svg, String(most));
            svgEl("text", { "class": "axis", x: x0 - 6, y: top + plot, "text-anchor": "end" }, svg, "0");
            for (var i = 0; i <= counts.length; i += Math.max(1, Math.ceil(counts.length / 8))) {
              svgEl("text", { "class": "axis", x: x0 + i * barWidth, y: top + plot + 16, "text-anchor": "middle" }, svg, fmt(first + i * bin));
            }
            var stripSvg = newChart(node, "ttff-strip", x0 + width + 20, 70);
            axis(stripSvg, x0, width, 66, last, 52, first);
            strip(stripSvg, values, x0, width, last, 4, 44, "", "time to first frame,", first);
          })();

          // Before main, by library.
          (function () {
            var mainStart = null;
            (summary.phases || []).forEach(function (p) { if (p.name === "main" && p.image === undefined) mainStart = p.startNs.median; });
            var rows = (summary.phases || []).filter(function (p) {
              var c = category(p.name);
              return (c === "loader" || c === "program") && p.durationNs.median > 0;
            });
            var node = section(main, "Before main, by library", rows.length ? "Median time per loader phase and per object's initializers" +
              (mainStart !== null ? " (share of " + fmt(mainStart) + " to main)." : ".") : "No phase before main was observed.");
            if (!rows.length) return;
            var labelWidth = 250, width = 520, rowHeight = 18;
            var most = Math.max.apply(null, rows.map(function (p) { return p.durationNs.median; }));
            var svg = newChart(node, "pre-main", labelWidth + width + 150, rows.length * rowHeight + 4);
            rows.forEach(function (p, i) {
              var y = i * rowHeight, d = p.durationNs.median;
              svgEl("text", { x: 0, y: y + 13 }, svg, label(p));
              tip(svgEl("rect", { "class": "library-bar cat-" + category(p.name), x: labelWidth, y: y + 3,
                width: Math.max(d / most * width, 1), height: rowHeight - 6, rx: 2 }, svg), label(p) + ": " + fmt(d));
              svgEl("text", { "class": "axis", x: labelWidth + d / most * width + 6, y: y + 13 }, svg,
                fmt(d) + (mainStart ? "  " + (d / mainStart * 100).toFixed(1) + "%" : ""));
            });
          })();

          // Flags.
          (function () {
            var flags = [];
            runs.forEach(function (run) { (run.flags || []).forEach(function (f) { flags.push({ run: run.index, flag: f }); }); });
            var node = section(main, "Flags", flags.length ? "Heavy main-thread work the sampler found." :
              "No flags: the sampler did not run, or found nothing heavy on the main thread.");
            if (!flags.length) return;
            var table = el("table", { id: "lp-flags" }, node);
            var head = el("tr", {}, table);
            ["run", "kind", "phase", "function", "object", "duration", "syscall", "advice"].forEach(function (n) { el("th", {}, head, n); });
            flags.slice(0, 500).forEach(function (item) {
              var f = item.flag, row = el("tr", { "class": "flag-row" }, table);
              el("td", { "class": "num" }, row, String(item.run));
              el("td", {}, row, f.kind); el("td", {}, row, f.phase); el("td", {}, row, f.function); el("td", {}, row, f.object);
              el("td", { "class": "num" }, row, fmt(f.durationNs)); el("td", {}, row, f.syscall || ""); el("td", {}, row, f.advice);
            });
          })();

          // Flame graph of the sampled main-thread stacks, merged over the runs.
          (function () {
            var root = { name: "all samples", count: 0, children: {} };
            function frameName(f) { return f.symbol || (f.binaryName + "+0x" + Number(f.offsetIntoBinaryTextSegment).toString(16)); }
            function merge(into, frame, depth) {
              if (depth > 130) return;
              var name = frameName(frame);
              var child = into.children[name] || (into.children[name] = { name: name, binary: frame.binaryName, count: 0, children: {} });
              child.count += frame.sampleCount;
              (frame.subFrames || []).forEach(function (sub) { merge(child, sub, depth + 1); });
            }
            runs.forEach(function (run) {
              if (!run.callStackTree) return;
              run.callStackTree.callStacks.forEach(function (stack) {
                if (!stack.threadAttributed) return;
                stack.callStackRootFrames.forEach(function (frame) { root.count += frame.sampleCount; merge(root, frame, 1); });
              });
            });
            var node = section(main, "Flame graph", root.count ? "Main-thread samples of every run, callers above callees; width is the share of samples." :
              "Not sampled: run launchprof with the sampler to see where the main thread spends its launch.");
            if (!root.count) return;
            var width = 1000, rowHeight = 17, rows = [];
            function layout(frame, x, depth) {
              var w = frame.count / root.count * width;
              if (w < 0.5) return;
              rows.push({ frame: frame, x: x, w: w, depth: depth });
              var childX = x;
              Object.keys(frame.children).sort().forEach(function (key) {
                var child = frame.children[key];
                layout(child, childX, depth + 1);
                childX += child.count / root.count * width;
              });
            }
            layout(root, 0, 0);
            var depth = 0;
            rows.forEach(function (r) { depth = Math.max(depth, r.depth); });
            var svg = newChart(node, "flame-graph", width, (depth + 1) * rowHeight + 2);
            rows.forEach(function (r) {
              var hue = 20 + (r.frame.name.length * 37) % 40;
              var g = svgEl("g", {}, svg);
              tip(svgEl("rect", { "class": "flame-frame", x: r.x, y: r.depth * rowHeight, width: r.w, height: rowHeight - 1,
                fill: "hsl(" + hue + ", 85%, " + (55 + (r.depth % 3) * 5) + "%)" }, g),
                r.frame.name + " — " + r.frame.count + " samples (" + (r.frame.count / root.count * 100).toFixed(1) + "%)");
              if (r.w > 40) {
                var text = r.frame.name.slice(0, Math.floor(r.w / 6.5));
                svgEl("text", { x: r.x + 3, y: r.depth * rowHeight + 12 }, g, text);
              }
            });
          })();

          // Prewarmed vs ordinary launches.
          (function () {
            var prewarmed = runs.filter(function (r) { return r.metrics.optimizedTimeToFirstFrameNs !== undefined; });
            if (!prewarmed.length) {
              section(main, "Prewarmed vs ordinary launches", "No prewarmed launch in this report.");
              return;
            }
            var ordinary = runs.filter(function (r) {
              return r.metrics.optimizedTimeToFirstFrameNs === undefined && r.metrics.timeToFirstFrameNs !== undefined;
            });
            var node = section(main, "Prewarmed vs ordinary launches",
              "Ordinary: spawn → first frame. Prewarmed: resume → first frame (the prewarm and the hold are not in it).");
            var a = ordinary.map(function (r) { return { run: r.index, value: r.metrics.timeToFirstFrameNs }; });
            var b = prewarmed.map(function (r) { return { run: r.index, value: r.metrics.optimizedTimeToFirstFrameNs }; });
            var all = a.concat(b).map(function (v) { return v.value; });
            var maxNs = Math.max.apply(null, all.concat([1])) * 1.05;
            var x0 = 110, width = 700;
            var svg = newChart(node, "prewarm", x0 + width + 20, 130);
            axis(svg, x0, width, 126, maxNs, 112);
            svgEl("text", { x: 0, y: 30 }, svg, "ordinary (" + a.length + ")");
            svgEl("text", { x: 0, y: 85 }, svg, "prewarmed (" + b.length + ")");
            strip(svg, a, x0, width, maxNs, 4, 48, "", "ordinary");
            strip(svg, b, x0, width, maxNs, 58, 48, "prewarm", "prewarmed");
          })();

          if (!failures.length) {
            document.body.setAttribute("data-charts", String(charts));
            document.body.setAttribute("data-render", "ok");
          }
        })();
        """#
}
