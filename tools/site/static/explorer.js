/* The web version of each chapter's explorer (tools/site/explorers.py).
 *
 * Every frame and status line was drawn by the explorer's own Python at build time;
 * this script only swaps them. Each control is a labelled range input (arrow keys,
 * Home/End, pointer); the status line sits in an aria-live region and is the frame's
 * text alternative. The first frame loads lazily; the other frames are requested on
 * the first interaction, so a change shows as soon as its frame is there. Nothing
 * animates (no transition), whatever the reader's motion preference.
 */
(() => {
  "use strict";

  function setUp(player) {
    const data = JSON.parse(player.querySelector("script.posenc-player-data").textContent);
    const base = player.dataset.base;
    const image = player.querySelector("img.posenc-player-frame");
    const link = image.closest("a"); // the frame at full size
    const status = player.querySelector(".posenc-player-status");
    const inputs = [...player.querySelectorAll('input[type="range"]')];
    const kept = []; // the preloaded frames, kept alive (and decoded) while the page is open
    let preloaded = false;

    function preload() {
      if (preloaded) return;
      preloaded = true;
      for (const [src] of Object.values(data.frames)) {
        const frame = new Image();
        frame.decoding = "async";
        frame.src = base + src;
        kept.push(frame);
      }
      player.__posencFrames = kept;
    }

    function show() {
      const key = inputs.map((input) => input.value).join(",");
      const frame = data.frames[key];
      if (!frame) return;
      inputs.forEach((input, n) => {
        const label = data.controls[n].labels[Number(input.value)];
        input.setAttribute("aria-valuetext", label);
        const output = player.querySelector(`output[for="${input.id}"]`);
        if (output) output.textContent = label;
      });
      image.loading = "eager";
      image.src = base + frame[0];
      if (link) link.href = base + frame[0];
      image.alt = frame[2];
      if (status.innerHTML !== frame[1]) status.innerHTML = frame[1];
      player.dataset.frame = key;
    }

    for (const input of inputs) {
      input.addEventListener("focus", preload);
      input.addEventListener("pointerdown", preload);
      input.addEventListener("input", () => {
        preload();
        show();
      });
    }
    player.classList.add("posenc-player-ready");
  }

  function start() {
    document.querySelectorAll(".posenc-player").forEach(setUp);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
