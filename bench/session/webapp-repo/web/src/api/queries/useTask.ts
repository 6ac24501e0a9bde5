import { useQuery } from "@tanstack/react-query";
import { api } from "../client";
import { keys } from "../keys";

export function useTask(taskId: string | null) {
  const query = useQuery({
    queryKey: keys.tasks.detail(taskId ?? ""),
    queryFn: () => api.tasks.get(taskId!),
    enabled: taskId !== null,
  });
  return { task: query.data, isLoading: query.isLoading, error: query.error };
}
