import { useMemo } from 'react';
import { createClient, type RpcBridge } from './api/client';
import { HomeView } from './views/HomeView';

export function App({ bridge }: { bridge: RpcBridge | null }) {
  const client = useMemo(() => (bridge ? createClient(bridge) : null), [bridge]);
  if (!client) {
    return (
      <main>
        <p role="alert" className="error">No connection to Infer Lab's main process. Start the app with npm start.</p>
      </main>
    );
  }
  return (
    <main>
      <HomeView client={client} />
    </main>
  );
}
