import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export type ScriptOptions = {
  /** Node flags before the script (--expose-gc, --cpu-prof ...). */
  nodeFlags?: string[];
  /** The script is JavaScript already (compileScript): run by Node alone, without tsx's loader. */
  compiled?: boolean;
  env?: Record<string, string>;
  /** Killed (SIGKILL) past this; every child is bounded in time. */
  timeoutMs: number;
  label?: string;
};

const tsx = import.meta.resolve('tsx');

export function scriptPath(relativeToBench: string): string {
  return fileURLToPath(new URL(`../${relativeToBench}`, import.meta.url));
}

function spawnScript(script: string, args: string[], opts: ScriptOptions): ChildProcess {
  const loader = opts.compiled ? [] : ['--import', tsx];
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), ...loader, scriptPath(script), ...args], {
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    env: { ...process.env, ...opts.env },
  });
  const label = opts.label ?? script;
  child.stderr!.on('data', (c: Buffer) => {
    for (const line of c.toString().split('\n')) if (line.trim()) process.stderr.write(`  (${label}) ${line}\n`);
  });
  return child;
}

/** Runs a bench script to its end; it answers with one IPC message, which is returned. */
export function runScript<T>(script: string, args: string[], opts: ScriptOptions): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawnScript(script, args, opts);
    let answer: T | undefined;
    let got = false;
    child.on('message', (m) => {
      answer = m as T;
      got = true;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} ${args.join(' ')} took longer than ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (got && code === 0) resolve(answer as T);
      else reject(new Error(`${script} ${args.join(' ')} exited with ${code ?? signal}${got ? '' : ' without an answer'}`));
    });
  });
}

export type Service<R> = {
  child: ChildProcess;
  /** The first IPC message of the child: where it listens, its pid... */
  ready: R;
  /** Sends a request over IPC and resolves with the child's next answer. */
  request<A>(message: object, timeoutMs?: number): Promise<A>;
  stop(): Promise<void>;
};

/** Starts a long-running bench script (a target server, an agent) and waits for its first message. */
export function startScript<R>(script: string, args: string[], opts: ScriptOptions): Promise<Service<R>> {
  return new Promise((resolve, reject) => {
    const child = spawnScript(script, args, opts);
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} was not ready within ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code ?? signal} before it was ready`));
    });
    child.once('message', (ready) => {
      clearTimeout(timer);
      let stopping: Promise<void> | undefined;
      resolve({
        child,
        ready: ready as R,
        request: <A>(message: object, timeoutMs = 120_000) =>
          new Promise<A>((res, rej) => {
            const t = setTimeout(
              () => rej(new Error(`${script} did not answer ${JSON.stringify(message)} within ${timeoutMs} ms`)),
              timeoutMs,
            );
            child.once('message', (m) => {
              clearTimeout(t);
              res(m as A);
            });
            // A child that ended meanwhile: the request fails rather than the part.
            child.send(message, (err) => {
              if (!err) return;
              clearTimeout(t);
              rej(err);
            });
          }),
        stop() {
          stopping ??= (async () => {
            if (child.exitCode !== null || child.signalCode !== null) return;
            child.kill('SIGTERM');
            const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            await exited;
            clearTimeout(killer);
          })();
          return stopping;
        },
      });
    });
  });
}

/** What a bench child sends its parent (IPC). */
export function answer(message: unknown): Promise<void> {
  return new Promise((resolve, reject) => process.send!(message, (err: Error | null) => (err ? reject(err) : resolve())));
}
