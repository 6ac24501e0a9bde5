import {
  preferenceDefaults,
  type ChannelPreference,
  type NotificationPayload,
  type NotificationType,
} from "@tandem/shared/notifications";
import type { NotificationSettings, UpdateNotificationSettings } from "@tandem/shared/schemas/settings";
import { prisma } from "../db";
import { enqueue } from "../jobs/queue";
import { publishToUser } from "../realtime";

export async function preferenceFor(userId: string, type: NotificationType): Promise<ChannelPreference> {
  const row = await prisma.notificationPreference.findUnique({
    where: { userId_type: { userId, type } },
    select: { inApp: true, email: true },
  });
  return row ?? preferenceDefaults[type];
}

/**
 * Stores the notification, pushes it to the user's open tabs and queues the
 * email when their preferences allow it. Callers never notify the actor.
 */
export async function notify<T extends NotificationType>(
  userId: string,
  type: T,
  payload: NotificationPayload[T],
): Promise<void> {
  const pref = await preferenceFor(userId, type);
  if (pref.inApp) {
    const row = await prisma.notification.create({ data: { userId, type, payload } });
    await publishToUser(userId, { type: "notification.created", notificationId: row.id });
  }
  if (pref.email) {
    await enqueue("send-email", { template: type, userId, payload }, { jobId: `notify:${type}:${userId}:${JSON.stringify(payload)}` });
  }
}

export async function getSettings(userId: string): Promise<NotificationSettings> {
  const [rows, user] = await Promise.all([
    prisma.notificationPreference.findMany({ where: { userId }, select: { type: true, inApp: true, email: true } }),
    prisma.user.findUniqueOrThrow({ where: { id: userId }, select: { quietHours: true } }),
  ]);
  const preferences = { ...preferenceDefaults };
  for (const row of rows) {
    if (row.type in preferences) preferences[row.type as NotificationType] = { inApp: row.inApp, email: row.email };
  }
  return { preferences, quietHours: (user.quietHours as NotificationSettings["quietHours"]) ?? null };
}

export async function updateSettings(userId: string, input: UpdateNotificationSettings): Promise<NotificationSettings> {
  await prisma.$transaction(async (tx) => {
    for (const [type, pref] of Object.entries(input.preferences ?? {})) {
      await tx.notificationPreference.upsert({
        where: { userId_type: { userId, type } },
        create: { userId, type, ...pref },
        update: pref,
      });
    }
    if (input.quietHours !== undefined) {
      await tx.user.update({ where: { id: userId }, data: { quietHours: input.quietHours ?? undefined } });
    }
  });
  return getSettings(userId);
}
