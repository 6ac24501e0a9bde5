import { useQuery } from "@tanstack/react-query";
import { api } from "../client";
import { keys } from "../keys";

export function useMe() {
  const query = useQuery({
    queryKey: keys.me.profile(),
    queryFn: api.me.get,
    // The profile only changes through the settings pages, which update this key.
    staleTime: 5 * 60_000,
  });
  return { me: query.data, isLoading: query.isLoading, error: query.error };
}
