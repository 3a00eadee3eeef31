const m0 = process.memoryUsage();
const mod = process.argv[2];
await import(mod);
globalThis.gc?.(); globalThis.gc?.();
await new Promise(r => setTimeout(r, 200));
globalThis.gc?.();
const m1 = process.memoryUsage();
const rss = (await import('node:fs')).readFileSync('/proc/self/status','utf8').match(/VmRSS:\s+(\d+)/)[1]/1024;
console.log(mod, 'heapUsed +', ((m1.heapUsed - m0.heapUsed)/1048576).toFixed(1), 'MiB, rss', rss.toFixed(1));
