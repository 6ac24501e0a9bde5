// Notification types. Adding a type means adding it here, its preference
// default below and its keys in web/src/locales/<lang>/notifications.json.

export const notificationTypes = [
  "task_assigned",
  "task_commented",
  "mentioned",
  "project_invited",
  "weekly_digest",
] as const;

export type NotificationType = (typeof notificationTypes)[number];

export interface ChannelPreference {
  inApp: boolean;
  email: boolean;
}

export const preferenceDefaults: Record<NotificationType, ChannelPreference> = {
  task_assigned: { inApp: true, email: true },
  task_commented: { inApp: true, email: false },
  mentioned: { inApp: true, email: true },
  project_invited: { inApp: true, email: true },
  weekly_digest: { inApp: false, email: true },
};

export type NotificationPayload = {
  task_assigned: { taskId: string; actorId: string };
  task_commented: { taskId: string; commentId: string; actorId: string };
  mentioned: { taskId: string; actorId: string };
  project_invited: { projectId: string; actorId: string };
  weekly_digest: { weekStart: string };
};
