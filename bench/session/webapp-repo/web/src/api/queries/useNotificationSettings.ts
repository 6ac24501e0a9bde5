import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { UpdateNotificationSettings } from "@tandem/shared/schemas/settings";
import { api } from "../client";
import { keys } from "../keys";

export function useNotificationSettings() {
  const query = useQuery({
    queryKey: keys.me.notificationSettings(),
    queryFn: api.me.getNotificationSettings,
  });
  return { settings: query.data, isLoading: query.isLoading, error: query.error, refetch: query.refetch };
}

export function useUpdateNotificationSettings() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: UpdateNotificationSettings) => api.me.updateNotificationSettings(body),
    onSuccess: (settings) => {
      queryClient.setQueryData(keys.me.notificationSettings(), settings);
    },
  });
}
