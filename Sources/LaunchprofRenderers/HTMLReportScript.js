(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var charts = 0;
  var scriptErrors = [];
  window.addEventListener("error", function (event) {
    scriptErrors.push(String(event.message));
    document.body.setAttribute("data-render", "error: " + scriptErrors.join("; "));
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
    if (ns < 0) return "-" + fmt(-ns);
    function sig(v) { return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2); }
    if (ns < 1e3) return ns.toFixed(0) + " ns";
    if (ns < 1e6) return sig(ns / 1e3) + " µs";
    if (ns < 1e9) return sig(ns / 1e6) + " ms";
    return sig(ns / 1e9) + " s";
  }
  // A statistic's median from the report's summary (nil when the report has none): the page
  // computes no median of its own, so it says what the text and the trace say.
  function medianOf(stats) { return stats ? stats.median : null; }
  function niceStep(range, target) {
    var raw = Math.max(range / Math.max(target, 1), 1);
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 5, 10];
    for (var i = 0; i < steps.length; i++) if (steps[i] * power >= raw) return steps[i] * power;
    return 10 * power;
  }
  // A tick label: one unit for the whole axis (from its largest value) and as many
  // decimals as the step needs, so neighbouring labels always differ.
  function fmtTick(ns, step, top) {
    var units = [[1e9, " s"], [1e6, " ms"], [1e3, " µs"], [1, " ns"]];
    var unit = units[units.length - 1];
    for (var i = 0; i < units.length; i++) if (Math.max(top, step) >= units[i][0]) { unit = units[i]; break; }
    var decimals = Math.min(6, Math.max(0, Math.ceil(-Math.log10(step / unit[0]) - 1e-9)));
    return (ns / unit[0]).toFixed(decimals) + unit[1];
  }
  // Time → x. With `cut` ({at, lengthNs}), `lengthNs` of time starting `at` (the prewarm
  // hold) has been taken out of the times given and is drawn as a break there.
  function timeScale(x0, width, lo, hi, cut) {
    var gap = cut ? 26 : 0;
    var k = (width - gap) / Math.max(hi - lo, 1);
    return {
      lo: lo, hi: hi, cut: cut, gap: gap,
      x: function (t) { return x0 + (t - lo) * k + (cut && t > cut.at ? gap : 0); },
      w: function (from, to) {
        return (to - from) * k + (cut && from <= cut.at && to > cut.at ? gap : 0);
      }
    };
  }
  // The hold of a prewarmed launch, as a break: two slanted strokes (the axis labels it).
  function drawBreak(svg, x, gap, y1, y2) {
    svgEl("rect", { "class": "hold-gap", x: x + 3, y: y1, width: gap - 6, height: y2 - y1 }, svg);
    [x + 6, x + gap - 6].forEach(function (bx) {
      svgEl("line", { "class": "hold-break", x1: bx - 4, x2: bx + 4, y1: y2, y2: y1 }, svg);
    });
  }
  // Text labels placed on one row without overlapping: a label that would touch one already
  // placed (the hold's, a tick's) is left out. Sizes are the browser's own (getBBox).
  function placer(svg) {
    var boxes = [];
    function overlaps(a) {
      return boxes.some(function (b) { return a.x < b.x + b.width + 4 && b.x < a.x + a.width + 4 && a.y < b.y + b.height && b.y < a.y + a.height; });
    }
    return {
      reserve: function (node) { boxes.push(node.getBBox()); return node; },
      place: function (node) {
        var box = node.getBBox();
        if (overlaps(box)) { svg.removeChild(node); return null; }
        boxes.push(box);
        return node;
      }
    };
  }
  // Ticks and their labels. With a cut (the prewarm hold), ticks after the break are labelled
  // with the real time from the spawn, as every label beside the bars is: the axis and the
  // labels agree, and the break stands for the hold's length.
  function axis(svg, x0, width, y, maxNs, height, minNs, scale, holdLabel) {
    var lo = minNs || 0;
    scale = scale || timeScale(x0, width, lo, maxNs, null);
    var step = niceStep(maxNs - lo, 6);
    var labels = placer(svg);
    if (scale.cut && holdLabel) {
      var bx = scale.x(scale.cut.at) + scale.gap / 2;
      labels.reserve(tip(svgEl("text", { "class": "axis hold-label", x: bx, y: y, "text-anchor": "middle" }, svg, holdLabel),
        "the hold, not to scale: " + holdLabel));
    }
    function tick(position, text) {
      svgEl("line", { "class": "grid", x1: position, x2: position, y1: 0, y2: height }, svg);
      labels.place(svgEl("text", { "class": "axis", x: position, y: y, "text-anchor": "middle" }, svg, text));
    }
    var before = scale.cut ? Math.min(scale.cut.at, maxNs) : maxNs;
    for (var t = Math.ceil(lo / step) * step; t <= before + 1e-9; t += step) tick(scale.x(t), fmtTick(t, step, before));
    if (scale.cut) {
      var length = scale.cut.lengthNs, realEnd = maxNs + length;
      for (var r = Math.ceil((scale.cut.at + length) / step) * step; r <= realEnd + 1e-9; r += step) {
        if (r - length <= scale.cut.at) continue;
        tick(scale.x(r - length), fmtTick(r, step, realEnd));
      }
    }
    return scale;
  }
  // A prewarmed run's times with its hold taken out (identity for an ordinary run).
  function holdCut(prewarm) {
    if (!prewarm || !(prewarm.holdNs > 0)) return null;
    return { at: prewarm.resumeAtNs - prewarm.holdNs, lengthNs: prewarm.holdNs };
  }
  function withoutHold(t, cut) {
    if (!cut || t <= cut.at) return t;
    return t >= cut.at + cut.lengthNs ? t - cut.lengthNs : cut.at;
  }
  // A bar cut by thread state: a ThreadStateBar of the view, whose parts' shares Swift computed.
  // Every segment's tooltip lists the whole bar, the hovered state marked.
  function drawStateBar(svg, bar, x, y, width, height, title) {
    var lines = bar.parts.map(function (part) {
      return stateNames[part.state].label + " " + fmt(part.ns) + " (" + part.percent + ")";
    });
    var group = svgEl("g", { "class": "state-bar", "data-total-ns": bar.totalNs }, svg);
    var at = x;
    bar.parts.forEach(function (part, i) {
      var w = part.share * width;
      tip(svgEl("rect", { "class": "state state-" + part.state, "data-state": part.state, "data-ns": part.ns,
        x: at, y: y, width: w, height: height }, group),
        title + "\n" + lines.map(function (line, j) { return (j === i ? "▸ " : "   ") + line; }).join("\n"));
      at += w;
    });
    return group;
  }
  // The states' legend: every state, or a bar's states with their times.
  function stateLegend(parent, bar) {
    var legend = el("p", { "class": "legend state-legend" }, parent);
    var entries = bar ? bar.parts : view.stateLegend;
    entries.forEach(function (entry) {
      var name = stateNames[entry.state];
      var item = el("span", { "data-state": entry.state, title: "Perfetto: " + name.perfetto }, legend);
      el("i", { "class": "state-" + entry.state }, item);
      item.appendChild(document.createTextNode(name.label + (bar ? " " + fmt(entry.ns) + " (" + entry.percent + ")" : "")));
    });
    return legend;
  }
  function section(parent, title, note) {
    var node = el("section", {}, parent);
    el("h2", {}, node, title);
    if (note) el("p", { "class": "note" }, node, note);
    return node;
  }

  var report = JSON.parse(document.getElementById("lp-report").textContent);
  // Each phase's label and category, as the terminal and the trace name them.
  var view = JSON.parse(document.getElementById("lp-view").textContent);
  var runs = report.runs || [];
  // Each thread state's label (the terminal's words) and the state Perfetto shows for it.
  var stateNames = {};
  view.stateLegend.forEach(function (entry) { stateNames[entry.state] = entry; });
  var summary = report.summary || { phases: [] };
  var main = document.getElementById("lp-main");
  main.textContent = "";
  document.getElementById("lp-subtitle").textContent =
    [report.target.path].concat(report.target.arguments || []).join(" ") + " — " + summary.runs + " runs, " +
    (report.mode.warmup ? report.mode.warmup + " warm-up, " : "") + (report.mode.cold ? "cold" : "warm") +
    ", ready at " + report.mode.readiness + " — " + report.host.cpu + ", " + report.host.cores + " CPUs, Linux " +
    report.host.kernel + ", " + report.host.libc;

  // Issue 22: how runs that did not complete ended, as the text summary says it.
  function outcomeText(o) {
    if (o.kind === "crashed") return "crashed (" + o.signal + ")";
    if (o.kind === "timedOut") return "timed out" + (o.timeoutNs ? " after " + fmt(o.timeoutNs) : "") + " waiting for " + o.waitedFor;
    if (o.kind === "exitedEarly") return "exited with status " + o.exitCode + (o.beforeReadiness ? " before readiness" : "");
    if (o.kind === "interrupted") return "ended when launchprof was interrupted (" + o.signal + ")";
    return o.kind + (o.reason ? ": " + o.reason : "");
  }
  var outcomes = (summary.outcomes || []).filter(function (c) { return c.outcome.kind !== "completed"; })
    .map(function (c) { return c.runs + " " + outcomeText(c.outcome); }).join("; ");

  // Headline metrics.
  (function () {
    // Runs that read pages from disk (major faults) were not warm: say so beside the figures.
    var faults = summary.pageFaults, fromDisk = "";
    if (faults && faults.runsReadingFromDisk > 0) {
      fromDisk = "; " + faults.runsReadingFromDisk + " of " + summary.runs + " runs read " + faults.majorFaults +
        " page(s) from disk (major faults)" + (report.mode.cold ? "" : ": not warm launches");
    }
    var node = section(main, "Metrics", "Across " + summary.runs + " runs" +
      (outcomes ? " (" + outcomes + ")" : summary.failedRuns ? " (" + summary.failedRuns + " failed)" : "") +
      fromDisk + "; times from the spawn.");
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

  // What went wrong, as the JSON has it: each distinct warning (a crash's stack as a list of
  // frames) and each phase not measured with its reason, with the runs it came from.
  (function () {
    if (!view.warnings.length && !view.absent.length) return;
    var node = section(main, "Warnings", "What the runs' JSON says went wrong or could not be measured, once per distinct message.");
    node.setAttribute("id", "lp-warnings");
    node.setAttribute("class", "warnings");
    function runsText(entry) {
      return entry.runs.length === runs.length ? "every run" : entry.runs.length + " of " + runs.length + " runs (run " +
        entry.runs.slice(0, 8).join(", ") + (entry.runs.length > 8 ? ", …" : "") + ")";
    }
    if (view.warnings.length) {
      var list = el("ul", { id: "lp-warning-list" }, node);
      view.warnings.slice(0, 40).forEach(function (w) {
        var li = el("li", { "class": "warning-" + w.code }, list);
        el("b", {}, li, w.frames ? "crash stack" : w.code);
        li.appendChild(document.createTextNode(w.frames ? ", innermost first " : ": " + w.message + " "));
        el("span", { "class": "runs" }, li, "— " + runsText(w));
        if (w.frames) {
          var frames = el("ol", { "class": "crash-stack" }, li);
          w.frames.forEach(function (frame) { el("li", {}, frames, frame); });
        }
      });
    }
    if (view.warnings.length > 40) el("p", { "class": "note" }, node, (view.warnings.length - 40) + " more warnings in the JSON report.");
    if (view.absent.length) {
      el("p", { "class": "note" }, node, "Not measured:");
      var missing = el("ul", { id: "lp-absent-list" }, node);
      view.absent.forEach(function (entry) {
        var li = el("li", {}, missing);
        el("b", {}, li, entry.phase);
        li.appendChild(document.createTextNode(": " + entry.reason + " "));
        el("span", { "class": "runs" }, li, "— " + runsText(entry));
      });
    }
  })();

  // Phase waterfall: the median, or any run.
  function waterfallRows(runIndex) {
    return runs[runIndex].phases.map(function (p, i) {
      var style = view.runPhases[runIndex][i];
      return { label: style.label, start: p.startNs, dur: p.durationNs, cat: style.category, states: style.states };
    });
  }
  var medianRows = (summary.phases || []).map(function (p, i) {
    var style = view.summaryPhases[i];
    return { label: style.label, start: p.startNs.median, dur: p.durationNs.median, cat: style.category, states: style.states };
  });
  // `cut`: the hold of a prewarmed launch, taken out of the time axis and drawn as a break.
  // Under each phase with thread states, its state bar, and its largest states in words.
  function drawWaterfall(holder, rows, name, cut, statesOf) {
    holder.textContent = "";
    var withStates = rows.some(function (r) { return r.states; });
    var labelWidth = 250, width = 640, rowHeight = withStates ? 30 : 18, top = 22;
    var end = 1;
    rows.forEach(function (r) { end = Math.max(end, withoutHold(r.start + r.dur, cut)); });
    var height = top + rows.length * rowHeight + 6;
    var svg = newChart(holder, name, labelWidth + width + 90, height);
    var scale = axis(svg, labelWidth, width, 12, end, height, 0, timeScale(labelWidth, width, 0, end, cut),
      cut ? "hold " + fmt(cut.lengthNs) : "");
    if (cut) drawBreak(svg, scale.x(cut.at), scale.gap, 16, height - 4);
    rows.forEach(function (r, i) {
      var y = top + i * rowHeight;
      svgEl("text", { x: 0, y: y + 12 }, svg, r.label);
      var from = withoutHold(r.start, cut), to = withoutHold(r.start + r.dur, cut);
      var x = scale.x(from);
      if (r.dur > 0) {
        tip(svgEl("rect", { "class": "phase cat-" + r.cat, x: x, y: y + 3, width: Math.max(scale.w(from, to), 1),
          height: 12, rx: 2 }, svg), r.label + ": " + fmt(r.dur) + " from " + fmt(r.start));
        svgEl("text", { "class": "axis", x: labelWidth + width + 8, y: y + 12 }, svg, fmt(r.dur));
        if (r.states) {
          drawStateBar(svg, r.states, x, y + 17, Math.max(scale.w(from, to), 1), 7, r.label + ": " + statesOf);
          stateWords(svg, r.states.words, 10, y + 26, labelWidth - 24);
        }
      } else {
        tip(svgEl("line", { "class": "instant", x1: x, x2: x, y1: y + 1, y2: y + rowHeight - 1 }, svg),
          r.label + " at " + fmt(r.start));
        svgEl("text", { "class": "axis", x: labelWidth + width + 8, y: y + 12 }, svg, "at " + fmt(r.start));
      }
    });
  }
  // A bar's largest states in words, cut at a comma (with "…") to fit `room`.
  function stateWords(svg, words, x, y, room) {
    var node = svgEl("text", { "class": "axis state-words", x: x, y: y }, svg, words);
    var parts = words.split(", ");
    while (parts.length > 1 && node.getComputedTextLength() > room) {
      parts.pop();
      node.textContent = parts.join(", ") + ", …";
    }
    return node;
  }
  var medianStates = "the main thread, each state's median over the runs (shares of their sum)";
  var runStatesOf = "the main thread's states, adding up to the phase";
  var prewarmSummary = summary.prewarm || null;
  var medianCut = prewarmSummary && prewarmSummary.prewarmNs && prewarmSummary.holdNs ?
    { at: prewarmSummary.prewarmNs.median, lengthNs: prewarmSummary.holdNs.median } : null;
  (function () {
    var node = section(main, "Phase waterfall",
      "Each bar starts at its median start and lasts its median duration (medians come from different runs)." +
      (medianCut ? " The prewarm hold is cut out of the time axis and drawn as a break." : ""));
    var legend = el("p", { "class": "legend" }, node);
    view.legend.forEach(function (entry) {
      var item = el("span", {}, legend);
      el("i", { "class": "cat-" + entry.category }, item);
      item.appendChild(document.createTextNode(entry.legend));
    });
    function hasStates(phase) { return phase.states; }
    var anyStates = view.summaryPhases.some(hasStates) || view.runPhases.some(function (phases) { return phases.some(hasStates); });
    if (anyStates) {
      el("p", { "class": "note" }, node, "Under each phase, the main thread by thread state (Perfetto's colours): in the " +
        "median, each state's median over the runs, drawn as shares of their sum; in a run, its own states, which add " +
        "up to the phase.");
      stateLegend(node, null);
    }
    var pick = el("label", {}, node, "Show ");
    var select = el("select", { id: "lp-waterfall-select" }, pick);
    el("option", { value: "median" }, select, "median of " + summary.runs + " runs");
    runs.forEach(function (run, i) { el("option", { value: String(i) }, select, "run " + run.index + " (pid " + run.pid + ")"); });
    var holder = el("div", { id: "lp-waterfall" }, node);
    drawWaterfall(holder, medianRows, "waterfall", medianCut, medianStates);
    select.addEventListener("change", function () {
      var value = select.value;
      if (value === "median") drawWaterfall(holder, medianRows, "waterfall", medianCut, medianStates);
      else drawWaterfall(holder, waterfallRows(Number(value)), "waterfall", holdCut(runs[Number(value)].prewarm), runStatesOf);
      charts -= 1;  // the same chart, redrawn
    });
  })();

  // A table whose columns `numeric` (indices) are figures, right-aligned.
  function table(parent, id, headings, numeric) {
    var node = el("table", { id: id, "class": "states-table" }, el("div", { "class": "table-wrap" }, parent));
    node.numeric = numeric;
    var head = el("tr", {}, node);
    headings.forEach(function (heading, i) { el("th", numeric.indexOf(i) >= 0 ? { "class": "num" } : {}, head, heading); });
    return node;
  }
  function row(tableNode, cells) {
    var tr = el("tr", {}, tableNode);
    cells.forEach(function (cell, i) { el("td", tableNode.numeric.indexOf(i) >= 0 ? { "class": "num" } : {}, tr, cell); });
    return tr;
  }
  function tag(task) { return task.launchprof ? " (launchprof)" : task.ownProcess ? " (this process)" : ""; }
  // One run's thread states into `holder`: its times from the report, its bars, words and
  // tasks' names from the view. Returns the charts it drew.
  function drawRunStates(holder, i) {
    holder.textContent = "";
    var states = runs[i].threadStates, names = view.runStates[i];
    if (!states) {
      el("p", { "class": "note", id: "lp-run-no-states" }, holder, names.missing);
      return 0;
    }
    var drawn = 0;
    el("p", { "class": "bar-title" }, holder, names.title);
    if (names.launch) {
      drawStateBar(newChart(holder, "run-states", 900, 22), names.launch, 0, 1, 900, 20, names.title);
      drawn += 1;
      stateLegend(holder, names.launch);
    }
    if (states.reasons.length) {
      el("h3", {}, holder, "Its reasons");
      var reasons = el("ol", { id: "lp-run-reasons", "class": "reasons" }, holder);
      states.reasons.forEach(function (r, j) {
        var li = el("li", { "class": "run-reason", "data-code": r.code }, reasons);
        el("b", {}, li, r.message);
        el("div", { "class": "reason-context" }, li, "[" + names.reasonContexts[j] + "]");
      });
    }
    if (states.cpuCompetitors.length) {
      el("h3", {}, holder, "What ran on its CPU while it was runnable");
      var competitors = table(holder, "lp-competitors", ["task", "time"], [1]);
      states.cpuCompetitors.forEach(function (c, j) { row(competitors, [names.competitors[j] + tag(c), fmt(c.ns)]); });
    }
    if (states.wakers.length) {
      el("h3", {}, holder, "What ended its waits");
      var wakers = table(holder, "lp-wakers", ["woken by", "from", "waits", "time waited"], [2, 3]);
      states.wakers.forEach(function (w, j) { row(wakers, [names.wakers[j] + tag(w), stateNames[w.state].label, String(w.count), fmt(w.ns)]); });
    }
    if (states.fileReads.length) {
      el("h3", {}, holder, "Files it waited to read from disk");
      var files = table(holder, "lp-file-reads", ["file", "waited", "major faults", "pages read"], [1, 2, 3]);
      states.fileReads.forEach(function (f) { row(files, [f.path, fmt(f.waitNs), String(f.majorFaults), String(f.pagesRead)]); });
    }
    if (states.lockHolders.length) {
      el("h3", {}, holder, "Who released the locks it waited on");
      var holders = table(holder, "lp-lock-holders", ["thread", "waits", "time waited"], [1, 2]);
      states.lockHolders.forEach(function (h, j) { row(holders, [names.lockHolders[j] + tag(h), String(h.count), fmt(h.ns)]); });
    }
    el("h3", {}, holder, "The process's other threads");
    if (!states.threads.length) {
      el("p", { "class": "note" }, holder, "None during the launch.");
    } else {
      var threads = table(holder, "lp-threads", ["thread", "alive", "states", ""], [1]);
      states.threads.forEach(function (t, j) {
        var tr = row(threads, [t.name + " " + t.tid, fmt(t.startNs) + " → " + fmt(t.endNs)]);
        var bar = names.threads[j];
        var cell = el("td", {}, tr);
        // A bar in a table cell, not a chart of its own.
        if (bar) drawStateBar(svgEl("svg", { "class": "thread-states", width: 240, height: 12, viewBox: "0 0 240 12" }, cell),
          bar, 0, 1, 240, 10, t.name + " " + t.tid);
        el("td", { "class": "muted" }, tr, bar ? bar.words : "");
      });
    }
    if (states.notes.length) {
      var notes = el("ul", { "class": "note" }, holder);
      states.notes.forEach(function (n) { el("li", {}, notes, n); });
    }
    return drawn;
  }
  // Thread states (issue 34): the main thread's time over the launch by state, the slow-launch
  // reasons ranked with their thresholds and advice (as the text has them), and one run in
  // detail: what ran instead of it, what ended its waits, the files and locks it waited for,
  // the process's other threads.
  (function () {
    var launch = view.launchStates, reasons = summary.threadStates ? summary.threadStates.reasons : [];
    if (!launch && !view.noThreadStates) return;
    var node = section(main, "Thread states and slow-launch reasons",
      "The main thread from the spawn to the first frame (or the readiness point, or the exit) by scheduler state, from " +
      "the kernel's scheduler events" + (prewarmSummary ? "; a prewarmed launch's hold is left out" : "") +
      ". Colours are Perfetto's thread-state colours (hover a state for its name there).");
    node.setAttribute("id", "lp-thread-states");
    if (!launch) {
      el("p", { "class": "warning", id: "lp-no-thread-states" }, node, view.noThreadStates);
      return;
    }
    el("p", { "class": "bar-title" }, node, launch.title);
    if (launch.bar) {
      drawStateBar(newChart(node, "launch-states", 900, 24), launch.bar, 0, 1, 900, 22, launch.title);
      stateLegend(node, launch.bar);
    }
    if (launch.lostRuns) el("p", { "class": "warning" }, node, launch.lostRuns);
    el("h3", {}, node, "Why: the slow-launch reasons, ranked");
    if (!reasons.length) {
      el("p", { id: "lp-no-reason" }, node, launch.noReason);
    } else {
      var list = el("ol", { id: "lp-reasons", "class": "reasons" }, node);
      reasons.forEach(function (r, i) {
        var li = el("li", { "class": "reason reason-" + r.code, "data-code": r.code }, list);
        el("b", { "class": "reason-message" }, li, r.message);
        el("div", { "class": "reason-context" }, li, "[" + launch.reasonContexts[i] + "; median " + fmt(r.medianNs) +
          (summary.threadStates.runs > 1 ? " over those runs" : "") + "]");
        el("div", { "class": "reason-advice" }, li, "→ " + r.advice);
      });
    }
    el("h3", {}, node, "One run in detail");
    var pick = el("label", {}, node, "Show ");
    var select = el("select", { id: "lp-states-select" }, pick);
    var first = -1;
    runs.forEach(function (run, i) {
      if (first < 0 && run.threadStates) first = i;
      el("option", { value: String(i) }, select, "run " + run.index + (run.threadStates ? "" : " (no thread states)"));
    });
    var holder = el("div", { id: "lp-run-states" }, node);
    if (first < 0) return;
    select.value = String(first);
    var drawn = drawRunStates(holder, first);
    select.addEventListener("change", function () {
      charts -= drawn;  // the same section, redrawn
      drawn = drawRunStates(holder, Number(select.value));
    });
  })();

  // Every run at a glance. Runs of a prewarm report are lined up on their freeze (left of the
  // break, the axis counting back from it) and their resume (right of it, counting on): each
  // run's hold and prewarm part differ, so no one time from the spawn is true of every row.
  (function () {
    if (!runs.length) return;
    var shown = runs.slice(0, 300);
    var withStates = shown.some(function (r, i) { return view.runStates[i].launch; });
    var anyPrewarm = shown.some(function (r) { return holdCut(r.prewarm) !== null; });
    var node = section(main, "Every run", (anyPrewarm ?
      "One row per run: the prewarm part up to the freeze (the axis counts back from it), the hold as a break, the launch " +
      "from the resume (the axis counts on from it); the first frame in red." :
      "One row per run: its phases from the spawn, the first frame in red.") +
      (withStates ? " Under each row, its main thread's states over the launch, as shares of it (not placed in time)." : "") +
      (shown.length < runs.length ? " The first " + shown.length + " of " + runs.length + " runs." : ""));
    var labelWidth = 70, width = 820, stateHeight = withStates ? (shown.length > 40 ? 2 : 4) : 0;
    var rowHeight = (shown.length > 40 ? 9 : 14) + stateHeight, top = 22;
    var labelEvery = Math.ceil(12 / rowHeight);
    // Time before the freeze (prewarm part) and after the resume (or the spawn), the longest of each.
    var before = 0, after = 1;
    shown.forEach(function (run) {
      var cut = holdCut(run.prewarm), resume = cut ? cut.at + cut.lengthNs : 0;
      if (cut) before = Math.max(before, cut.at);
      run.phases.forEach(function (p) { after = Math.max(after, p.startNs + p.durationNs - resume); });
    });
    var gap = anyPrewarm ? 26 : 0;
    var k = (width - gap) / (before + after), breakX = labelWidth + before * k, resumeX = breakX + gap;
    // A row's time t (from its spawn) → x: before its freeze, counted back from the break;
    // after its resume, on from the break's far side.
    function rowX(cut) {
      return function (t) {
        if (!cut) return resumeX + t * k;
        return t <= cut.at ? breakX - (cut.at - t) * k : resumeX + Math.max(t - cut.at - cut.lengthNs, 0) * k;
      };
    }
    var height = top + shown.length * rowHeight + 4;
    var svg = newChart(node, "runs", labelWidth + width + 10, height);
    var labels = placer(svg);
    var step = niceStep(before + after, 10);
    function tick(x, text) {
      svgEl("line", { "class": "grid", x1: x, x2: x, y1: 0, y2: height }, svg);
      labels.place(svgEl("text", { "class": "axis", x: x, y: 12, "text-anchor": "middle" }, svg, text));
    }
    if (anyPrewarm) {
      var holds = prewarmSummary && prewarmSummary.holdNs;
      labels.reserve(tip(svgEl("text", { "class": "axis hold-label", x: breakX + gap / 2, y: 12, "text-anchor": "middle" }, svg,
        "hold" + (holds ? " " + fmt(holds.median) : "")), "the hold, not to scale: median " + (holds ? fmt(holds.median) : "–")));
      for (var d = step; d <= before + 1e-9; d += step) tick(breakX - d * k, "-" + fmtTick(d, step, before));
      // The break's edges, the freeze and the resume, are the hold label's.
      [breakX, resumeX].forEach(function (edge) { svgEl("line", { "class": "grid", x1: edge, x2: edge, y1: 14, y2: height }, svg); });
      for (var t = step; t <= after + 1e-9; t += step) tick(resumeX + t * k, "+" + fmtTick(t, step, after));
    } else {
      for (var u = 0; u <= after + 1e-9; u += step) tick(resumeX + u * k, fmtTick(u, step, after));
    }
    shown.forEach(function (run, i) {
      var y = top + i * rowHeight;
      var cut = holdCut(run.prewarm), x = rowX(cut);
      if (i % labelEvery === 0) svgEl("text", { "class": "axis", x: 0, y: y + rowHeight - 3 }, svg, "run " + run.index);
      if (cut) drawBreak(svg, breakX, gap, y, y + rowHeight);
      var states = view.runStates[i];
      if (states.launch) {
        var end = x(run.threadStates.launchEndNs);
        drawStateBar(svg, states.launch, x(0), y + rowHeight - stateHeight, Math.max(end - x(0), 1), stateHeight, states.title)
          .setAttribute("data-run", run.index);
      }
      run.phases.forEach(function (p, j) {
        var style = view.runPhases[i][j];
        var from = x(p.startNs), to = x(p.startNs + p.durationNs);
        if (p.durationNs > 0) {
          tip(svgEl("rect", { "class": "run-phase cat-" + style.category, x: from, y: y + 1,
            width: Math.max(to - from, 0.5), height: rowHeight - 2 - stateHeight, "fill-opacity": 0.8 }, svg),
            "run " + run.index + " " + style.label + ": " + fmt(p.durationNs));
        } else if (p.name === "firstFrame" || p.name === "windowMapped") {
          svgEl("line", { "class": "instant", x1: from, x2: from, y1: y, y2: y + rowHeight - stateHeight }, svg);
        }
      });
    });
  })();

  // Ordinary launches: runs without a prewarm, and the ordinary launch each prewarmed run
  // is paired with (`prewarm.ordinaryTimeToFirstFrameNs`).
  function ordinaryLaunches() {
    var values = [];
    runs.forEach(function (r) {
      if (r.metrics.optimizedTimeToFirstFrameNs === undefined && r.metrics.timeToFirstFrameNs !== undefined) {
        values.push({ run: r.index, value: r.metrics.timeToFirstFrameNs });
      } else if (r.prewarm && r.prewarm.ordinaryTimeToFirstFrameNs !== undefined) {
        values.push({ run: r.index, value: r.prewarm.ordinaryTimeToFirstFrameNs });
      }
    });
    return values;
  }

  // Distribution of time to first frame.
  // `m`: the median line, from the report's summary.
  function strip(svg, values, m, x0, width, maxNs, y, h, extraClass, name, minNs) {
    var lo = minNs || 0;
    function at(v) { return x0 + (v - lo) / (maxNs - lo) * width; }
    values.forEach(function (v, i) {
      var jitter = ((i * 0.618033988749895) % 1) * (h - 8) + 4;
      tip(svgEl("circle", { "class": "run-dot" + (extraClass ? " " + extraClass : ""), cx: at(v.value),
        cy: y + jitter, r: 3.5 }, svg), name + " run " + v.run + ": " + fmt(v.value));
    });
    if (m !== null && m !== undefined) {
      tip(svgEl("line", { "class": "median-line", x1: at(m), x2: at(m), y1: y, y2: y + h }, svg), "median " + fmt(m));
    }
  }
  (function () {
    // A prewarmed launch's time from the spawn includes the hold: it is compared below instead.
    var prewarmedCount = runs.filter(function (r) { return r.metrics.optimizedTimeToFirstFrameNs !== undefined; }).length;
    var values = ordinaryLaunches();
    var node = section(main, "Time to first frame",
      (values.length ? "Histogram and one dot per ordinary launch (dashed: the median)." :
        "No ordinary launch reached its first frame.") +
      (prewarmedCount ? " The ordinary launches are those paired with the " + prewarmedCount +
        " prewarmed ones, which are compared in their own section." : ""));
    if (!values.length) return;
    var lo = Math.min.apply(null, values.map(function (v) { return v.value; }));
    var hi = Math.max.apply(null, values.map(function (v) { return v.value; }));
    // Launches that took (nearly) the same time get a span of 1% around them, so that the
    // bins and ticks are read in that resolution, not in nanoseconds no clock resolves.
    var narrowest = Math.max(hi * 0.01, 1000);
    if (hi - lo < narrowest) {
      var widen = (narrowest - (hi - lo)) / 2;
      lo = Math.max(lo - widen, 0);
      hi += widen;
    }
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
    var every = Math.max(1, Math.ceil(counts.length / 8));
    for (var i = 0; i <= counts.length; i += every) {
      svgEl("text", { "class": "axis hist-tick", x: x0 + i * barWidth, y: top + plot + 16, "text-anchor": "middle" }, svg,
        fmtTick(first + i * bin, bin * every, last));
    }
    var stripSvg = newChart(node, "ttff-strip", x0 + width + 20, 70);
    axis(stripSvg, x0, width, 66, last, 52, first);
    // The summary's median of the same launches: the paired ordinary ones in a prewarm report.
    var m = prewarmedCount ? medianOf(prewarmSummary && prewarmSummary.ordinaryTimeToFirstFrameNs) : medianOf(summary.timeToFirstFrameNs);
    strip(stripSvg, values, m, x0, width, last, 4, 44, "", "time to first frame,", first);
  })();

  // Before main, by library.
  (function () {
    var mainStart = null;
    (summary.phases || []).forEach(function (p) { if (p.name === "main" && p.image === undefined) mainStart = p.startNs.median; });
    var rows = (summary.phases || []).map(function (p, i) { return { phase: p, style: view.summaryPhases[i] }; })
      .filter(function (row) {
        var c = row.style.category;
        return (c === "loader" || c === "program") && row.phase.durationNs.median > 0;
      });
    var node = section(main, "Before main, by library", rows.length ? "Median time per loader phase and per object's initializers" +
      (mainStart !== null ? " (share of " + fmt(mainStart) + " to main)." : ".") : "No phase before main was observed.");
    if (!rows.length) return;
    var labelWidth = 250, width = 520, rowHeight = 18;
    var most = Math.max.apply(null, rows.map(function (row) { return row.phase.durationNs.median; }));
    var svg = newChart(node, "pre-main", labelWidth + width + 150, rows.length * rowHeight + 4);
    rows.forEach(function (row, i) {
      var y = i * rowHeight, d = row.phase.durationNs.median;
      svgEl("text", { x: 0, y: y + 13 }, svg, row.style.label);
      tip(svgEl("rect", { "class": "library-bar cat-" + row.style.category, x: labelWidth, y: y + 3,
        width: Math.max(d / most * width, 1), height: rowHeight - 6, rx: 2 }, svg), row.style.label + ": " + fmt(d));
      svgEl("text", { "class": "axis", x: labelWidth + d / most * width + 6, y: y + 13 }, svg,
        fmt(d) + (mainStart ? "  " + (d / mainStart * 100).toFixed(1) + "%" : ""));
    });
  })();

  // Flags: one row per flag across the runs (the summary's), so 20 runs that raise the
  // same flag read as one line "20/20 runs"; per run only when the summary has none.
  (function () {
    var flags = [];
    (summary.flags || []).forEach(function (f) { flags.push({ runs: f.runs, durationNs: f.durationNs.median, flag: f }); });
    if (!flags.length) {
      runs.forEach(function (run) { (run.flags || []).forEach(function (f) { flags.push({ run: run.index, durationNs: f.durationNs, flag: f }); }); });
    }
    var perRun = flags.length > 0 && flags[0].run !== undefined;
    var sampled = runs.some(function (run) { return run.callStackTree || run.sampling; });
    var node = section(main, "Flags", flags.length ? "Heavy main-thread work the sampler found: the function the " +
      "work belongs to, and the path down to where the time was spent" +
      (perRun ? "." : "; the median duration over the runs that raised each flag.") :
      sampled ? "No flags: the sampler found nothing heavy on the main thread." :
      "Not sampled: run launchprof with --sample to flag heavy main-thread work.");
    if (!flags.length) return;
    var table = el("table", { id: "lp-flags" }, node);
    var head = el("tr", {}, table);
    [perRun ? "run" : "runs", "kind", "phase", "function", "object", perRun ? "duration" : "median", "syscall", "advice"]
      .forEach(function (n) { el("th", {}, head, n); });
    flags.slice(0, 500).forEach(function (item) {
      var f = item.flag, row = el("tr", { "class": "flag-row flag-" + f.kind }, table);
      el("td", { "class": "num" }, row, perRun ? String(item.run) : item.runs + "/" + (summary.runs || runs.length));
      el("td", {}, row, f.kind); el("td", {}, row, f.phase);
      // `path` (owner → innermost hot frame) when the report has it, else the function.
      var where = el("td", { "class": "flag-function" }, row);
      if (f.path && f.path.length > 1) {
        el("b", {}, where, f.path[0]);
        where.appendChild(document.createTextNode(" → " + f.path.slice(1).join(" → ")));
      } else {
        el("b", {}, where, f.function);
      }
      el("td", {}, row, f.object);
      el("td", { "class": "num" }, row, fmt(item.durationNs)); el("td", {}, row, f.syscall || ""); el("td", {}, row, f.advice);
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
    // The total, for a check against the folded stacks and the MetricKit trees (same counts).
    svg.setAttribute("data-samples", String(root.count));
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

  // Prewarmed vs ordinary launches: what the user waits for after the tap.
  function fmtBytes(bytes) {
    if (bytes === null || bytes === undefined) return "–";
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1048576) return (bytes / 1024).toFixed(1) + " KiB";
    return (bytes / 1048576).toFixed(1) + " MiB";
  }
  function statsRow(table, name, stats, format) {
    if (!stats) return;
    var row = el("tr", {}, table);
    el("td", {}, row, name);
    [stats.median, stats.min, stats.p90, stats.max].forEach(function (v) { el("td", { "class": "num" }, row, format(v)); });
    el("td", { "class": "num" }, row, String(stats.count));
  }
  (function () {
    var prewarmed = runs.filter(function (r) { return r.metrics.optimizedTimeToFirstFrameNs !== undefined; });
    if (!prewarmed.length) {
      section(main, "Prewarmed vs ordinary launches", "No prewarmed launch in this report.");
      return;
    }
    var ps = prewarmSummary || {};
    var a = ordinaryLaunches();
    var b = prewarmed.map(function (r) { return { run: r.index, value: r.metrics.optimizedTimeToFirstFrameNs }; });
    // Every median from the report's summary, the ones the terminal prints.
    var ordinaryMedian = medianOf(ps.ordinaryTimeToFirstFrameNs);
    var prewarmedMedian = medianOf(summary.optimizedTimeToFirstFrameNs);
    var node = section(main, "Prewarmed vs ordinary launches",
      "What the user waits for after the tap. Ordinary: spawn → first frame. Prewarmed: resume → first frame; " +
      "the prewarm part ran before the tap and the process was held frozen until it (the hold is drawn as a break, " +
      "not to scale).");
    node.setAttribute("id", "lp-prewarm-section");
    var headline = el("p", { "class": "headline", id: "lp-prewarm-headline" }, node);
    // A loss is a loss: a negative median saving says prewarming made the launch slower.
    var saving = ps.savingNs ? ps.savingNs.median : null;
    headline.textContent = "Median: ordinary " + fmt(ordinaryMedian) + ", prewarmed " + fmt(prewarmedMedian) +
      (saving === null ? "" : saving > 0 ? " — prewarming saves " + fmt(saving) + " per launch" :
        saving < 0 ? " — prewarming loses " + fmt(-saving) + " per launch" : " — no saving at the median") +
      (ps.losses ? " (" + ps.losses + " of " + ps.savingNs.count + " pairs slower prewarmed)" : "") + ".";

    // The median launch of each kind, lined up on the user's tap: an ordinary launch starts
    // there; a prewarmed one ran its prewarm part before it (left of the break: the hold).
    var prewarmPart = medianOf(ps.prewarmNs);
    var hold = medianOf(ps.holdNs);
    var ordinaryMain = medianOf(ps.ordinaryTimeToMainNs);
    var wait = Math.max(ordinaryMedian || 0, prewarmedMedian || 0, 1) * 1.04;
    var labelWidth = 150, width = 680, top = 26, rowHeight = 30, gap = 26;
    var before = prewarmPart || 0;
    var k = (width - gap) / (before + wait);
    var tapX = labelWidth + before * k + gap;
    var chartHeight = top + 2 * rowHeight + 36;
    var svg = newChart(node, "prewarm-timeline", labelWidth + width + 90, chartHeight);
    var step = niceStep(wait, 6);
    for (var t = 0; t <= wait + 1e-9; t += step) {
      var tx = tapX + t * k;
      svgEl("line", { "class": "grid", x1: tx, x2: tx, y1: top - 4, y2: top + 2 * rowHeight + 4 }, svg);
      svgEl("text", { "class": "axis", x: tx, y: chartHeight - 2, "text-anchor": "middle" }, svg,
        (t > 0 ? "+" : "") + fmtTick(t, step, wait));
    }
    svgEl("text", { "class": "axis", x: tapX + 4, y: top - 8 }, svg, "the user's tap");
    svgEl("line", { "class": "instant", x1: tapX, x2: tapX, y1: top - 4, y2: top + 2 * rowHeight }, svg);
    function bar(cls, fromX, ns, y, text) {
      if (!(ns > 0)) return;
      tip(svgEl("rect", { "class": "prewarm-bar " + cls, x: fromX, y: y + 5, width: Math.max(ns * k, 1),
        height: rowHeight - 10, rx: 2 }, svg), text + ": " + fmt(ns));
    }
    var y0 = top, y1 = top + rowHeight;
    svgEl("text", { x: 0, y: y0 + 19 }, svg, "ordinary (" + a.length + ")");
    svgEl("text", { x: 0, y: y1 + 19 }, svg, "prewarmed (" + b.length + ")");
    if (ordinaryMedian !== null) {
      var mainAt = ordinaryMain !== null && ordinaryMain < ordinaryMedian ? ordinaryMain : 0;
      bar("cat-loader", tapX, mainAt, y0, "spawn → main");
      bar("cat-app", tapX + mainAt * k, ordinaryMedian - mainAt, y0, "main → first frame");
      svgEl("text", { "class": "axis", x: tapX + ordinaryMedian * k + 6, y: y0 + 19 }, svg, fmt(ordinaryMedian));
    }
    if (prewarmedMedian !== null) {
      bar("cat-program prewarm-part", labelWidth, before, y1, "prewarm part, before the tap (spawn → frozen)");
      if (before > 0) svgEl("text", { "class": "axis", x: labelWidth, y: y1 + rowHeight + 10 }, svg, "prewarm part " + fmt(before));
      if (hold > 0) {
        svgEl("rect", { "class": "hold-gap", x: labelWidth + before * k + 3, y: y1 + 2, width: gap - 6, height: rowHeight - 4 }, svg);
        [labelWidth + before * k + 6, tapX - 6].forEach(function (bx) {
          svgEl("line", { "class": "hold-break", x1: bx - 4, x2: bx + 4, y1: y1 + rowHeight - 3, y2: y1 + 3 }, svg);
        });
        // Above the prewarm part, ending short of the tap's line: clear of both bars and the line.
        tip(svgEl("text", { "class": "axis hold-label", x: tapX - 6, y: y1 + 2, "text-anchor": "end" }, svg,
          "hold " + fmt(hold)), "the hold, not to scale");
      }
      bar("cat-app", tapX, prewarmedMedian, y1, "resume → first frame");
      svgEl("text", { "class": "axis", x: tapX + prewarmedMedian * k + 6, y: y1 + 19 }, svg, fmt(prewarmedMedian));
    }

    // Every launch, one dot each.
    el("p", { "class": "note" }, node, "Every launch, one dot each (dashed: the median): ordinary from the spawn, " +
      "prewarmed from the resume.");
    var all = a.concat(b).map(function (v) { return v.value; });
    var maxNs = Math.max.apply(null, all.concat([1])) * 1.05;
    var x0 = 150, stripWidth = 680;
    var strip2 = newChart(node, "prewarm", x0 + stripWidth + 20, 130);
    axis(strip2, x0, stripWidth, 126, maxNs, 112);
    svgEl("text", { x: 0, y: 30 }, strip2, "ordinary (" + a.length + ")");
    svgEl("text", { x: 0, y: 85 }, strip2, "prewarmed (" + b.length + ")");
    strip(strip2, a, ordinaryMedian, x0, stripWidth, maxNs, 4, 48, "", "ordinary");
    strip(strip2, b, prewarmedMedian, x0, stripWidth, maxNs, 58, 48, "prewarm", "prewarmed");

    if (prewarmSummary) {
      var table = el("table", { id: "lp-prewarm-numbers" }, node);
      var head = el("tr", {}, table);
      ["", "median", "min", "p90", "max", "runs"].forEach(function (n) { el("th", {}, head, n); });
      statsRow(table, "saving", ps.savingNs, fmt);
      statsRow(table, "ordinary time to first frame", ps.ordinaryTimeToFirstFrameNs, fmt);
      statsRow(table, "prewarm part (spawn → frozen)", ps.prewarmNs, fmt);
      statsRow(table, "hold", ps.holdNs, fmt);
      statsRow(table, "frozen process (PSS)", ps.frozenPSSBytes, fmtBytes);
      if (ps.frozenCPURuns) el("p", { "class": "warning" }, node, ps.frozenCPURuns + " frozen processes used CPU during the hold: the freeze is broken.");
    }
  })();

  // Prewarm hazards: what the prewarm part did that goes stale or acts too early.
  (function () {
    if (!prewarmSummary) return;
    var ps = prewarmSummary;
    var hazards = (ps.hazards || []).slice();
    // `severity` ("hazard" | "note") when the report has it; without it every finding is a hazard.
    function severity(h) { return h.severity === "note" ? "note" : "hazard"; }
    hazards.sort(function (x, y) { return (severity(x) === "note") - (severity(y) === "note"); });
    var count = hazards.filter(function (h) { return severity(h) === "hazard"; }).length;
    var notes = hazards.length - count;
    var verdict = ps.hazardScanError ? "The hazard scan could not run: " + ps.hazardScanError :
      ps.prewarmSafe ? "Prewarm-safe: nothing before the freeze reads a clock that goes stale, reaches the network or the user's files, starts a thread or takes a lock." :
      "Not prewarm-safe: " + count + " hazard" + (count === 1 ? "" : "s") + " before the freeze.";
    var node = section(main, "Prewarm hazards", verdict + (notes ? " " + notes + " note" + (notes === 1 ? "" : "s") +
      " (harmless in a spawned process) listed below." : ""));
    node.setAttribute("id", "lp-hazards");
    if (!hazards.length) return;
    var anyWhy = hazards.some(function (h) { return h.why; });
    var table = el("table", {}, node);
    var head = el("tr", {}, table);
    ["severity", "kind", "call", "detail", "function", "object"].concat(anyWhy ? ["why"] : [])
      .forEach(function (n) { el("th", {}, head, n); });
    hazards.forEach(function (h) {
      var row = el("tr", { "class": "hazard-row severity-" + severity(h) }, table);
      el("td", {}, row).appendChild(el("span", { "class": "badge badge-" + severity(h) }, null, severity(h)));
      el("td", {}, row, h.kind); el("td", {}, row, h.syscall); el("td", {}, row, h.detail);
      el("td", {}, row, h.function); el("td", {}, row, h.object);
      if (anyWhy) el("td", {}, row, h.why || "");
    });
  })();

  // The pool (`--pool N`): hit rate and the memory it holds.
  (function () {
    if (!prewarmSummary || !prewarmSummary.pool) return;
    var pool = prewarmSummary.pool;
    var node = section(main, "Pool", "Frozen processes kept ready (" + pool.size + "), refilled after each launch.");
    node.setAttribute("id", "lp-pool");
    var table = el("table", {}, node);
    [["launches", String(pool.launches)],
     ["hits", pool.hits + " (" + (pool.hitRatePerMille / 10).toFixed(1) + "%)"],
     ["misses (launched cold)", String(pool.launches - pool.hits)],
     ["expired by --ttl", String(pool.expired) + (pool.ttlNs ? " (ttl " + fmt(pool.ttlNs) + ")" : "")],
     ["memory held (PSS, median)", pool.heldPSSBytes ? fmtBytes(pool.heldPSSBytes.median) : "–"],
     ["refill (spawn → frozen, median)", pool.refillNs ? fmt(pool.refillNs.median) : "–"]].forEach(function (pair) {
      var row = el("tr", {}, table);
      el("th", {}, row, pair[0]);
      el("td", { "class": "num" }, row, pair[1]);
    });
  })();

  // A prewarm report is about the comparison: its sections go right after the metrics.
  (function () {
    var first = main.querySelector("section");
    if (!first || !runs.some(function (r) { return r.prewarm; })) return;
    var after = first.nextSibling;
    ["lp-prewarm-section", "lp-hazards", "lp-pool"].forEach(function (id) {
      var node = document.getElementById(id);
      if (node) main.insertBefore(node, after);
    });
  })();

  if (!scriptErrors.length) {
    document.body.setAttribute("data-charts", String(charts));
    document.body.setAttribute("data-render", "ok");
  }
})();
