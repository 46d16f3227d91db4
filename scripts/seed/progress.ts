// A progress bar on a terminal; on a pipe or a CI log, a line every tenth instead of a redraw.
export interface Progress {
  update(done: number): void;
  finish(): void;
}

export function progressBar(label: string, total: number, out: NodeJS.WriteStream = process.stderr): Progress {
  const started = Date.now();
  const tty = Boolean(out.isTTY);
  let lastDrawn = 0;
  let lastTenth = -1;
  let done = 0;

  function line(): string {
    const fraction = total ? done / total : 1;
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? Math.round(done / seconds) : 0;
    const width = 30;
    const filled = Math.round(fraction * width);
    return (
      `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done.toLocaleString('en')}/${total.toLocaleString('en')} ` +
      `${(fraction * 100).toFixed(0)}% ${seconds.toFixed(1)}s ${rate.toLocaleString('en')} rows/s`
    );
  }

  return {
    update(n) {
      done = n;
      if (tty) {
        if (Date.now() - lastDrawn < 100) return;
        lastDrawn = Date.now();
        out.write(`\r${line()}`);
      } else {
        const tenth = Math.floor((total ? n / total : 1) * 10);
        if (tenth === lastTenth) return;
        lastTenth = tenth;
        out.write(`${line()}\n`);
      }
    },
    finish() {
      out.write(tty ? `\r${line()}\n` : lastTenth === 10 ? '' : `${line()}\n`);
    },
  };
}
