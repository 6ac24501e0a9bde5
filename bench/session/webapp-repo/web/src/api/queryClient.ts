import { QueryCache, QueryClient } from "@tanstack/react-query";
import { logger } from "../lib/logger";
import { ApiError } from "./client";

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      retry: (failureCount, error) =>
        !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failureCount < 2,
      refetchOnWindowFocus: true,
    },
  },
  queryCache: new QueryCache({
    onError: (error, query) => {
      if (!(error instanceof ApiError) || error.status >= 500) {
        logger.error(error, { queryKey: query.queryKey });
      }
    },
  }),
});
