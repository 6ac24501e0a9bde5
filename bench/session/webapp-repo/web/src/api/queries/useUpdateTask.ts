import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { TaskDetail, UpdateTaskBody } from "@tandem/shared/schemas/task";
import { api } from "../client";
import { keys } from "../keys";

export function useUpdateTask(taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (patch: UpdateTaskBody) => api.tasks.update(taskId, patch),
    onSuccess: (task: TaskDetail) => {
      queryClient.setQueryData(keys.tasks.detail(taskId), task);
      void queryClient.invalidateQueries({ queryKey: keys.tasks.list(task.projectId) });
      void queryClient.invalidateQueries({ queryKey: keys.projects.stats(task.projectId) });
    },
  });
}

/** Done/undone is a toggle, so it is applied optimistically and rolled back on error. */
export function useToggleDone(taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (done: boolean) => api.tasks.update(taskId, { status: done ? "done" : "todo" }),
    onMutate: async (done) => {
      await queryClient.cancelQueries({ queryKey: keys.tasks.detail(taskId) });
      const previous = queryClient.getQueryData<TaskDetail>(keys.tasks.detail(taskId));
      if (previous) {
        queryClient.setQueryData(keys.tasks.detail(taskId), { ...previous, status: done ? "done" : "todo" });
      }
      return { previous };
    },
    onError: (_err, _done, context) => {
      if (context?.previous) queryClient.setQueryData(keys.tasks.detail(taskId), context.previous);
    },
    onSettled: (task) => {
      void queryClient.invalidateQueries({ queryKey: keys.tasks.detail(taskId) });
      if (task) void queryClient.invalidateQueries({ queryKey: keys.tasks.list(task.projectId) });
    },
  });
}
