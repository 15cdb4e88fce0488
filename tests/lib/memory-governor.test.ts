import { expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { MemoryGovernor } from "../../src/lib/memory-governor";

const MB = 1024 * 1024;

test("a full collection runs only while resident memory is over the soft limit", () => {
  let resident = 200 * MB;
  let collected = 0;
  const governor = new MemoryGovernor({ limitBytes: 384 * MB, residentBytes: () => resident, collect: () => void collected++ });
  governor.check();
  expect(collected).toBe(0);
  resident = 385 * MB;
  governor.check();
  expect(collected).toBe(1);
  expect(governor.collections).toBe(1);
  resident = 384 * MB;
  governor.check();
  expect(collected).toBe(1);
  resident = 400 * MB;
  governor.check();
  expect(collected).toBe(2);
});

test("memory a collection cannot return does not make it collect on every look", () => {
  let resident = 500 * MB;
  let collected = 0;
  // The collection frees only what grew past 450 MB: the rest is not garbage.
  const collect = () => {
    collected++;
    resident = Math.min(resident, 450 * MB);
  };
  const governor = new MemoryGovernor({ limitBytes: 384 * MB, stepBytes: 48 * MB, residentBytes: () => resident, collect });
  for (let look = 0; look < 10; look++) governor.check();
  expect(collected).toBe(1);
  resident = 497 * MB;
  governor.check();
  expect(collected).toBe(1);
  resident = 498 * MB;
  governor.check();
  expect(collected).toBe(2);
  // Back under the limit, the next time over it collects at once.
  resident = 300 * MB;
  governor.check();
  resident = 390 * MB;
  governor.check();
  expect(collected).toBe(3);
});

test("MEMORY_SOFT_LIMIT_MB sets the limit: 384 MB unless given, 0 turns the governor off", () => {
  const env = { JWT_SECRET: "x".repeat(40), DATA_DIR: "/nonexistent" };
  expect(loadConfig(env).memorySoftLimitMb).toBe(384);
  expect(loadConfig({ ...env, MEMORY_SOFT_LIMIT_MB: "0" }).memorySoftLimitMb).toBe(0);
  expect(loadConfig({ ...env, MEMORY_SOFT_LIMIT_MB: "256" }).memorySoftLimitMb).toBe(256);
});

test("by default the step after a collection that could not get under the limit is a thirty-second of the limit, at least 8 MB", () => {
  for (const [limitMb, stepMb] of [[384, 12], [256, 8], [128, 8]] as const) {
    let resident = (limitMb + 100) * MB;
    let collected = 0;
    const governor = new MemoryGovernor({ limitBytes: limitMb * MB, residentBytes: () => resident, collect: () => void collected++ });
    governor.check();
    resident += stepMb * MB - 1;
    governor.check();
    expect(collected).toBe(1);
    resident += 1;
    governor.check();
    expect(collected).toBe(2);
  }
});
