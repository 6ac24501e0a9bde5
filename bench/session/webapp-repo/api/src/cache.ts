import { Redis } from "ioredis";
import { config } from "./config";
import { log } from "./log";

const redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 2 });

// Keys look like `v1:ws:<workspaceId>:<what>:<id>`; bump the version prefix when
// the cached value's shape changes.
export const cache = {
  async wrap<T>(key: string, ttlSeconds: number, compute: () => Promise<T>): Promise<T> {
    try {
      const hit = await redis.get(key);
      if (hit !== null) return JSON.parse(hit) as T;
    } catch (err) {
      // A cache outage must not take reads down with it.
      log.warn({ err, key }, "cache read failed");
    }
    const value = await compute();
    redis.set(key, JSON.stringify(value), "EX", ttlSeconds).catch((err) => {
      log.warn({ err, key }, "cache write failed");
    });
    return value;
  },

  async del(...keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await redis.del(...keys);
  },
};

export const cacheKeys = {
  projectStats: (workspaceId: string, projectId: string) => `v1:ws:${workspaceId}:project-stats:${projectId}`,
};
