// Entry point: the login page at /login, the control panel everywhere else.
import { pagePath } from './lib/base.ts';
import { render } from 'preact';
import './styles.css';
import 'uplot/dist/uPlot.min.css';
import { LoginPage } from './components/Login.tsx';
import { App } from './components/App.tsx';
import { withoutTrailing } from './lib/text.ts';

const root = document.getElementById('app')!;
const onLogin = withoutTrailing(pagePath(), '/') === '/login';
render(onLogin ? <LoginPage /> : <App />, root);
