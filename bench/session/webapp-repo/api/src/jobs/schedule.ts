import { queue } from "./queue";

// Repeatable jobs. BullMQ dedupes by name + pattern, so re-registering on every
// worker boot is safe; removing an entry here does not unschedule it, use
// queue.removeJobScheduler(name) once in a release.
const schedules = [
  { name: "send-digests", pattern: "0 7 * * 1", data: {} },
  { name: "purge-expired-sessions", pattern: "30 3 * * *", data: {} },
  { name: "purge-deleted-tasks", pattern: "0 4 * * *", data: {} },
] as const;

export async function registerSchedules(): Promise<void> {
  for (const s of schedules) {
    await queue.upsertJobScheduler(s.name, { pattern: s.pattern, tz: "UTC" }, { name: s.name, data: s.data });
  }
}
