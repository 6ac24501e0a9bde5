import { z } from "zod";
import { notificationTypes } from "../notifications";

const channel = z.object({ inApp: z.boolean(), email: z.boolean() });

export const notificationSettings = z.object({
  preferences: z.record(z.enum(notificationTypes), channel),
  quietHours: z
    .object({
      start: z.string().regex(/^\d{2}:\d{2}$/),
      end: z.string().regex(/^\d{2}:\d{2}$/),
    })
    .nullable(),
});
export type NotificationSettings = z.infer<typeof notificationSettings>;

export const updateNotificationSettings = notificationSettings.partial();
export type UpdateNotificationSettings = z.infer<typeof updateNotificationSettings>;
