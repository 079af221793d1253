import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Ends the embedded servers when this process dies without stopping them (kill -9, an
 * out-of-memory kill). They run in process groups of their own, so that Ctrl-C reaches this
 * process alone and the service stops in order; nothing then ties them to this process, so a
 * small shell, in a group of its own too, holds a pipe from it: each guarded server is a line
 * (`+ pid SIGNAL`, `- pid` once stopped), and when the pipe closes (this process is gone,
 * however it went) the shell sends every server still listed its stop signal.
 */
const script = `
list=''
while read -r op pid sig; do
  case "$op" in
    +) list="$list $pid:$sig" ;;
    -) keep=''; for p in $list; do [ "\${p%%:*}" = "$pid" ] || keep="$keep $p"; done; list=$keep ;;
  esac
done
for p in $list; do kill -"\${p#*:}" "\${p%%:*}" 2>/dev/null; done
`;

let shell: ChildProcess | undefined;
let guarded = 0;

/**
 * Guards a child until the returned release is called (after it stopped). `signal` is how the
 * server stops cleanly: SIGINT for Postgres (fast shutdown), SIGTERM for nats-server.
 */
export function guardChild(pid: number, signal: 'SIGINT' | 'SIGTERM'): () => void {
  if (!shell) {
    shell = spawn('/bin/sh', ['-c', script], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    shell.on('error', () => {});
    shell.stdin!.on('error', () => {});
    // Neither the shell nor its pipe keeps this process alive.
    shell.unref();
    (shell.stdin as unknown as { unref(): void }).unref();
  }
  const own = shell;
  own.stdin!.write(`+ ${pid} ${signal.slice(3)}\n`);
  guarded++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    own.stdin!.write(`- ${pid}\n`);
    if (--guarded === 0 && own === shell) {
      // Nothing left to guard: the shell reads the end of its input and exits having killed nothing.
      own.stdin!.end();
      shell = undefined;
    }
  };
}
