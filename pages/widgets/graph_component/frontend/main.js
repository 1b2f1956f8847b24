// The Graph page's component (pages/widgets/graph_component). Streamlit's component protocol, by hand: say
// ready, receive "streamlit:render" with the args ({html, height}), set the frame height, and report a click
// with "streamlit:setComponentValue". The graph page itself runs in the sandboxed #graph frame and posts its
// clicks here; only those, from that frame and of the expected shape, are passed on.
(function () {
  "use strict";
  var frame = document.getElementById("graph");
  var shown = null;
  var count = 0;

  function send(type, fields) {
    var message = {isStreamlitMessage: true, apiVersion: 1, type: type};
    for (var name in fields || {}) { message[name] = fields[name]; }
    window.parent.postMessage(message, "*");
  }

  function click(data) {
    if (!data || data.papergraph !== "click") { return null; }
    // A sequence number unique to this click (the frame may be recreated, so not a bare counter): the page acts
    // on each click once, and clicking the same node again still counts.
    var seq = Date.now() + "-" + (++count);
    if (data.kind === "node" && typeof data.id === "string") {
      return {kind: "node", id: data.id.slice(0, 500), seq: seq};
    }
    if (data.kind === "edge" && typeof data.source === "string" && typeof data.target === "string") {
      return {kind: "edge", source: data.source.slice(0, 500), target: data.target.slice(0, 500), seq: seq};
    }
    return null;
  }

  window.addEventListener("message", function (event) {
    if (event.source === frame.contentWindow) {
      var value = click(event.data);
      if (value) {
        document.body.setAttribute("data-last-click", value.seq);
        send("streamlit:setComponentValue", {value: value, dataType: "json"});
      }
      return;
    }
    var data = event.data || {};
    if (event.source !== window.parent || data.type !== "streamlit:render") { return; }
    var args = data.args || {};
    var height = Math.max(100, Number(args.height) || 700);
    frame.style.height = height + "px";
    if (typeof args.html === "string" && args.html !== shown) {
      shown = args.html;  // redrawn only when the view changed: a click's rerun keeps zoom and selection
      frame.srcdoc = args.html;
    }
    send("streamlit:setFrameHeight", {height: height});
  });

  send("streamlit:componentReady");
})();
