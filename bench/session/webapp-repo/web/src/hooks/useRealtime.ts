import { useEffect } from "react";
import { useQueryClient, type InfiniteData } from "@tanstack/react-query";
import type { TaskDetail, TaskSummary } from "@tandem/shared/schemas/task";
import type { Page } from "../api/client";
import { keys } from "../api/keys";
import { config } from "../config";
import { logger } from "../lib/logger";

type TaskEvent =
  | { type: "task.created"; taskId: string; projectId: string; version: number }
  | { type: "task.updated"; taskId: string; projectId: string; version: number; task?: TaskDetail }
  | { type: "task.moved"; taskId: string; projectId: string; version: number; status: TaskSummary["status"]; position: number }
  | { type: "task.deleted"; taskId: string; projectId: string; version: number };

type ServerMessage = { channel: string; event: TaskEvent | { type: "notification.created"; notificationId: string } };

/** Keeps the query cache in sync with changes other people make. Mount once, in the app shell. */
export function useRealtime(): void {
  const queryClient = useQueryClient();

  useEffect(() => {
    const socket = new WebSocket(config.wsUrl);

    function patchList(projectId: string, taskId: string, version: number, patch: Partial<TaskSummary>) {
      queryClient.setQueryData<InfiniteData<Page<TaskSummary>>>(keys.tasks.list(projectId), (data) => {
        if (!data) return data;
        const pages = data.pages.map((p) => ({
          ...p,
          items: p.items.map((t) => (t.id === taskId && t.version < version ? { ...t, ...patch, version } : t)),
        }));
        return { ...data, pages };
      });
    }

    socket.onmessage = (message) => {
      const { event } = JSON.parse(message.data as string) as ServerMessage;
      switch (event.type) {
        case "task.updated": {
          const cached = queryClient.getQueryData<TaskDetail>(keys.tasks.detail(event.taskId));
          if (cached && cached.version >= event.version) return;
          if (event.task) {
            queryClient.setQueryData(keys.tasks.detail(event.taskId), event.task);
            patchList(event.projectId, event.taskId, event.version, event.task);
          } else {
            void queryClient.invalidateQueries({ queryKey: keys.tasks.detail(event.taskId) });
            void queryClient.invalidateQueries({ queryKey: keys.tasks.list(event.projectId) });
          }
          return;
        }
        case "task.moved":
          patchList(event.projectId, event.taskId, event.version, { status: event.status, position: event.position });
          return;
        case "task.created":
        case "task.deleted":
          void queryClient.invalidateQueries({ queryKey: keys.tasks.list(event.projectId) });
          return;
        case "notification.created":
          void queryClient.invalidateQueries({ queryKey: ["notifications"] });
          return;
      }
    };
    socket.onerror = () => logger.warn("realtime socket error");

    return () => socket.close();
  }, [queryClient]);
}
