import { Queue, type JobsOptions } from "bullmq";
import { Redis } from "ioredis";
import type { NotificationType } from "@tandem/shared/notifications";
import { config } from "../config";

export const connection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });

// Payloads carry ids only; the job reloads what it needs.
export interface JobPayloads {
  "send-email": { template: NotificationType | "password_reset" | "invite"; userId: string; payload: Record<string, unknown> };
  "send-digest": { userId: string };
  "scan-upload": { uploadId: string };
  "reindex-workspace": { workspaceId: string };
}

export type JobName = keyof JobPayloads;

export const queue = new Queue("default", {
  connection,
  defaultJobOptions: {
    attempts: 5,
    backoff: { type: "exponential", delay: 10_000 },
    removeOnComplete: 1000,
    removeOnFail: 5000,
  },
});

export async function enqueue<N extends JobName>(name: N, payload: JobPayloads[N], options?: JobsOptions): Promise<void> {
  await queue.add(name, payload, options);
}
