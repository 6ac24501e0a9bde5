import { useInfiniteQuery } from "@tanstack/react-query";
import { api } from "../client";
import { keys } from "../keys";

export function useTasks(projectId: string) {
  const query = useInfiniteQuery({
    queryKey: keys.tasks.list(projectId),
    queryFn: ({ pageParam }) => api.tasks.list(projectId, { cursor: pageParam, limit: 100 }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  return {
    tasks: query.data?.pages.flatMap((p) => p.items) ?? [],
    isLoading: query.isLoading,
    error: query.error,
    hasNextPage: query.hasNextPage,
    fetchNextPage: query.fetchNextPage,
  };
}
