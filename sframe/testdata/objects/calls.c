int g(int x){return x*3;}
int f(int x){int a[100]; a[x&7]=x; return g(a[1])+1;}
int main(int c, char**v){return f(c);}
