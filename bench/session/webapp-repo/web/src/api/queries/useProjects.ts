import { useQuery } from "@tanstack/react-query";
import { api } from "../client";
import { keys } from "../keys";

export function useProjects(workspaceId: string) {
  const query = useQuery({
    queryKey: keys.projects.list(workspaceId),
    queryFn: () => api.projects.list(workspaceId),
  });
  return { projects: query.data ?? [], isLoading: query.isLoading, error: query.error, refetch: query.refetch };
}
