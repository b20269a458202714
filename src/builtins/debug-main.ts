// The debug queue's script (scripts/debug/run): prints the working directory, the RQ_* variables and the rest of the environment.
import { ScriptPipe, pipeFds } from '../script-kit/pipe.js';

function main(env: NodeJS.ProcessEnv): number {
  const lines: string[] = [`cwd: ${process.cwd()}`, '', 'RQ variables:'];
  const names = Object.keys(env).sort();
  for (const k of names) if (k.startsWith('RQ_')) lines.push(`${k}=${env[k]}`);
  lines.push('', 'environment:');
  for (const k of names) if (!k.startsWith('RQ_')) lines.push(`${k}=${env[k]}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  new ScriptPipe(pipeFds(env)).send('done', 'script completed happily');
  return 0;
}

process.exitCode = main(process.env);
