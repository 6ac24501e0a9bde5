// Every TanStack Query key in the app. Invalidate with the broadest key that
// covers the change (keys.tasks.all after a bulk move, keys.tasks.detail(id) after an edit).
export const keys = {
  me: {
    all: ["me"] as const,
    profile: () => [...keys.me.all, "profile"] as const,
    notificationSettings: () => [...keys.me.all, "notification-settings"] as const,
  },
  projects: {
    all: ["projects"] as const,
    list: (workspaceId: string) => [...keys.projects.all, "list", workspaceId] as const,
    stats: (projectId: string) => [...keys.projects.all, "stats", projectId] as const,
  },
  tasks: {
    all: ["tasks"] as const,
    list: (projectId: string) => [...keys.tasks.all, "list", projectId] as const,
    detail: (taskId: string) => [...keys.tasks.all, "detail", taskId] as const,
  },
  search: {
    tasks: (workspaceId: string, q: string) => ["search", workspaceId, q] as const,
  },
};
